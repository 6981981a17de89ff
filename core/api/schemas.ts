import { z } from 'zod';

/**
 * Pieces several domains of the contract share. Declared once so a change (a longer hash, a third
 * runtime) is one edit, and every call that names the thing accepts exactly the same values.
 */

/** An environment version's content address: SHA-256 of its source, lowercase hex. */
export const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex digest');

/** A row id (environment, episode): a positive integer. */
export const idSchema = z.number().int().positive();

/** Where environment code runs: the Pyodide sandbox or native CPython. */
export const runtimeKindSchema = z.enum(['pyodide', 'cpython']);
export type RuntimeKindName = z.infer<typeof runtimeKindSchema>;
