/**
 * SPADE's actor defaults (SpadeConfig): temperature 1.0, top_p 0.95, top_k 20, max_tokens 8192,
 * 300 s a turn; and the client's 4 retries of a failed request. Plain constants (no zod): the
 * model client imports them before zod loads, and the renderer shows them as a form's defaults.
 */
export const SPADE_SAMPLING = { temperature: 1.0, topP: 0.95, topK: 20, maxTokens: 8192, turnTimeoutMs: 300_000, retries: 4 } as const;

/**
 * What a local model run asks for when the caller names nothing: what fits a small CPU model on the
 * machine it runs on, where SPADE's served defaults (8192 tokens a turn, 8 episodes at once) do not.
 * On two cores SmolLM2-135M writes about 70 tokens/s: 512 tokens is a turn of seconds (a 135M model
 * that does not stop would spend two minutes on 8192), and one episode at a time keeps the cores for
 * the model (a game's interpreter on another core would be one thread short; requests queue anyway,
 * core/models/client.ts LOCAL_GATE).
 */
export const LOCAL_SAMPLING = { maxTokens: 512, concurrency: 1 } as const;
