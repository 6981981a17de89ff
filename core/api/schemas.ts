import { z } from 'zod';
import { RUNTIME_CHOICES, RUNTIME_KINDS } from './runtimeKinds';

/**
 * Pieces several domains of the contract share. Declared once so a change (a longer hash, a third
 * runtime) is one edit, and every call that names the thing accepts exactly the same values.
 */

/** An environment version's content address: SHA-256 of its source, lowercase hex. */
export const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex digest');

/** A row id (environment, episode): a positive integer. */
export const idSchema = z.number().int().positive();

/**
 * Where environment code runs: the Pyodide sandbox or native CPython. The one name and the one pair
 * of spellings for it: the wire, the stored rows (audits.runtime, episodes.runtime) and every
 * module use these; "native" and "sandbox" name the runners, never a value of this type.
 */
export const runtimeKindSchema = z.enum(RUNTIME_KINDS);
export type RuntimeKind = z.infer<typeof runtimeKindSchema>;

/** Where to run a game: a runtime, or `auto` (the sandbox unless the game needs native modules: core/runtime/choice.ts). */
export const runtimeChoiceSchema = z.enum(RUNTIME_CHOICES);
export type RuntimeChoice = z.infer<typeof runtimeChoiceSchema>;
