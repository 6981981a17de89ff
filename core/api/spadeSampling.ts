/**
 * SPADE's actor defaults (SpadeConfig): temperature 1.0, top_p 0.95, top_k 20, max_tokens 8192,
 * 300 s a turn; and the client's 4 retries of a failed request. Plain constants (no zod): the
 * model client imports them before zod loads, and the renderer shows them as a form's defaults.
 */
export const SPADE_SAMPLING = { temperature: 1.0, topP: 0.95, topK: 20, maxTokens: 8192, turnTimeoutMs: 300_000, retries: 4 } as const;
