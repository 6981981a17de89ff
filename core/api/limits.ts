import { z } from 'zod';

/**
 * The sizes the workbench keeps, one number each for every path that stores, exports or imports:
 * what it stores (an import, the editor, a design round, the API) it exports, and what it exports
 * it imports. A limit that differed between two of them lost data on a round trip (issue 46: a
 * design round stored a 2 MiB hint that the import of its export then skipped).
 */
/** An environment's source, UTF-8 bytes. */
export const MAX_SOURCE_BYTES = 2 * 1024 * 1024;
/** A hint, UTF-8 bytes (SPADE's hints are a few hundred characters; this bounds a runaway designer). */
export const MAX_HINT_BYTES = 1024 * 1024;

const encoder = new TextEncoder();
export const utf8Bytes = (s: string): number => encoder.encode(s).byteLength;

/** Why a hint cannot be kept, or null when it can. */
export function hintTooLarge(hint: string): string | null {
  const n = utf8Bytes(hint);
  return n > MAX_HINT_BYTES ? `too large (${n} bytes; the limit is ${MAX_HINT_BYTES})` : null;
}

/** Why a source cannot be kept, or null when it can. */
export function sourceTooLarge(source: string): string | null {
  const n = utf8Bytes(source);
  return n > MAX_SOURCE_BYTES ? `too large (${n} bytes; the limit is ${MAX_SOURCE_BYTES})` : null;
}

/** A hint field of the contract: the same limit as storing and importing. */
export const boundedHint = (s: z.ZodString) => s.max(MAX_HINT_BYTES).refine((h) => hintTooLarge(h) === null, { message: `The hint is over ${MAX_HINT_BYTES} bytes (UTF-8), the most the library keeps` });
/** A source field of the contract: the same limit as storing and importing. */
export const boundedSource = (s: z.ZodString) => s.max(MAX_SOURCE_BYTES).refine((x) => sourceTooLarge(x) === null, { message: `The source is over ${MAX_SOURCE_BYTES} bytes (UTF-8), the most the library keeps` });
