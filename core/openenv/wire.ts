/**
 * OpenEnv's wire shapes, as the `openenv` package (PyPI, pinned 0.10.0 in scripts/openenv-venv.mjs)
 * defines them: openenv/core/env_server/types.py (ResetRequest, StepRequest, WS* messages,
 * WSErrorCode, HealthResponse, SchemaResponse, EnvironmentMetadata, State), mcp_types.py
 * (JsonRpcErrorCode, JsonRpcResponse) and http_server.py (what each route answers, and how its
 * errors look: FastAPI's `{"detail": ...}` over HTTP, `{"type": "error", "data": {"message", "code"}}`
 * over /ws). Written from reading those files; no code copied.
 */
import { z } from 'zod';

/** types.py WSErrorCode. */
export const WS_ERROR = {
  invalidJson: 'INVALID_JSON',
  unknownType: 'UNKNOWN_TYPE',
  validation: 'VALIDATION_ERROR',
  execution: 'EXECUTION_ERROR',
  capacity: 'CAPACITY_REACHED',
  factory: 'FACTORY_ERROR',
  session: 'SESSION_ERROR',
} as const;
export type WsErrorCode = (typeof WS_ERROR)[keyof typeof WS_ERROR];

/** mcp_types.py JsonRpcErrorCode and its default messages. */
export const RPC = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603, server: -32000 } as const;
const RPC_TEXT: Record<number, string> = { [-32700]: 'Parse error', [-32600]: 'Invalid Request', [-32601]: 'Method not found', [-32602]: 'Invalid params', [-32603]: 'Internal error', [-32000]: 'Server error' };

export function rpcError(code: number, message?: string, id: string | number | null = null): { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data: null } } {
  return { jsonrpc: '2.0', id, error: { code, message: message ?? RPC_TEXT[code] ?? 'Unknown error', data: null } };
}

export function wsError(code: WsErrorCode, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'error', data: { message, code, ...extra } });
}

/** A validation failure in pydantic's list form (what FastAPI's 422 and VALIDATION_ERROR carry). */
export interface FieldError {
  type: string;
  loc: (string | number)[];
  msg: string;
}
export function fieldErrors(e: z.ZodError, prefix: (string | number)[] = []): FieldError[] {
  return e.issues.map((i) => ({ type: i.code, loc: [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], msg: i.message }));
}

/** types.py ResetRequest (extra fields allowed) with the workbench's own task selectors. */
export const resetDataSchema = z
  .object({
    seed: z.number().int().min(0).max(2 ** 53).nullable().optional(),
    episode_id: z.string().max(255).nullable().optional(),
    /** A task from GET /tasks: its id, or its index in that list. */
    task_id: z.union([z.string().max(300), z.number().int().min(0)]).nullable().optional(),
    /** An environment of the served selection: its version hash (or a prefix of 8+ characters), or its name. */
    env: z.string().min(1).max(300).nullable().optional(),
    /** With the hint (SPADE's hinted first observation); only where --hint allows it. */
    hint: z.boolean().nullable().optional(),
  })
  .passthrough();
export type ResetData = z.infer<typeof resetDataSchema>;

/** The action of a served SPADE game: the agent's text, from which SPADE extracts the action. */
export const actionSchema = z.object({ message: z.string().max(1_000_000), metadata: z.record(z.string(), z.unknown()).optional() }).strict();
export type SpadeAction = z.infer<typeof actionSchema>;

/** types.py StepRequest: the action plus optional fields (extra allowed). */
export const stepRequestSchema = z.object({ action: z.record(z.string(), z.unknown()), timeout_s: z.number().gt(0).nullable().optional(), request_id: z.string().max(255).nullable().optional() }).passthrough();

/** types.py WS messages (BaseMessage: extra fields forbidden). */
export const wsResetSchema = z.object({ type: z.literal('reset'), data: z.record(z.string(), z.unknown()).default({}) }).strict();
export const wsStepSchema = z.object({ type: z.literal('step'), data: z.record(z.string(), z.unknown()) }).strict();
export const wsStateSchema = z.object({ type: z.literal('state') }).strict();
export const wsCloseSchema = z.object({ type: z.literal('close') }).strict();
export const wsMcpSchema = z.object({ type: z.literal('mcp'), data: z.record(z.string(), z.unknown()) }).strict();

/** mcp_types.py JsonRpcRequest. */
export const rpcRequestSchema = z.object({ jsonrpc: z.literal('2.0'), method: z.string(), params: z.record(z.string(), z.unknown()).default({}), id: z.union([z.string(), z.number().int()]).nullable().optional() }).strict();

/** JSON schemas GET /schema gives (pydantic's model_json_schema of the action, observation and state). */
export const ACTION_JSON_SCHEMA = {
  title: 'SpadeAction',
  type: 'object',
  description: "The agent's reply. SPADE extracts the action from it (its \\boxed{...} answer, else the stripped text) before the game's step().",
  properties: {
    message: { title: 'Message', type: 'string', description: "The agent's text for this turn" },
    metadata: { title: 'Metadata', type: 'object', additionalProperties: true },
  },
  required: ['message'],
  additionalProperties: false,
} as const;

export const OBSERVATION_JSON_SCHEMA = {
  title: 'SpadeObservation',
  type: 'object',
  properties: {
    done: { title: 'Done', type: 'boolean', default: false },
    reward: { title: 'Reward', anyOf: [{ type: 'number' }, { type: 'null' }], default: null, description: "0 until the episode ends; then SPADE's episode return (the last reward clamped to [-1, 1] if that step terminated, else 0)" },
    metadata: { title: 'Metadata', type: 'object', additionalProperties: true },
    text: { title: 'Text', type: 'string', description: 'What the agent sees: the observation as SPADE converts it (with the hint appended to the first one when hinted)' },
    prompt: { title: 'Prompt', anyOf: [{ type: 'string' }, { type: 'null' }], description: "At reset: SPADE's first user message around the observation" },
    task_id: { title: 'Task Id', type: 'string' },
    env_hash: { title: 'Env Hash', type: 'string' },
    env_name: { title: 'Env Name', anyOf: [{ type: 'string' }, { type: 'null' }] },
    seed: { title: 'Seed', anyOf: [{ type: 'integer' }, { type: 'null' }] },
    hint: { title: 'Hint', type: 'boolean' },
    turn: { title: 'Turn', type: 'integer' },
    action: { title: 'Action', anyOf: [{ type: 'string' }, { type: 'null' }], description: 'The action SPADE extracted from the message' },
    step_reward: { title: 'Step Reward', anyOf: [{ type: 'number' }, { type: 'string' }, { type: 'null' }], description: "float(reward) as SPADE's wrapper converts it ('NaN', 'Infinity' as text)" },
    terminated: { title: 'Terminated', type: 'boolean' },
    truncated: { title: 'Truncated', type: 'boolean' },
    info: { title: 'Info', type: 'object' },
    ended_by: { title: 'Ended By', anyOf: [{ type: 'string', enum: ['env', 'budget'] }, { type: 'null' }] },
    episode_return: { title: 'Episode Return', anyOf: [{ type: 'number' }, { type: 'null' }] },
    workbench_episode: { title: 'Workbench Episode', type: 'integer', description: 'The recorded episode in the workbench library (replayable)' },
  },
  required: ['text'],
} as const;

export const STATE_JSON_SCHEMA = {
  title: 'SpadeState',
  type: 'object',
  additionalProperties: true,
  properties: {
    episode_id: { title: 'Episode Id', anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
    step_count: { title: 'Step Count', type: 'integer', minimum: 0, default: 0 },
  },
} as const;
