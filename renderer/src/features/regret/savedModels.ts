import type { CallOutput } from '../../../../core/api';
import type { SweepPolicyInput } from '../../../../core/api/calls/runs';
import { ENDPOINT_KEY as LLM_ENDPOINT_KEY } from '../../store/savedEndpoint';

export type ModelPolicy = Extract<SweepPolicyInput, { kind: 'model' }>;


const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const secretName = (v: unknown): string | undefined => (typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v) && v.length <= 100 ? v : undefined);

/** A served model as a sweep takes it, from an endpoint and sampling as the app keeps them; null where a sweep cannot reach it. */
function asPolicy(e: Record<string, unknown>, s: Record<string, unknown> = e): ModelPolicy | null {
  const baseUrl = typeof e.baseUrl === 'string' ? e.baseUrl : null;
  const model = typeof e.model === 'string' ? e.model : null;
  // The embedded model and a server reached through a job's SSH connection play only in this app, not in a sweep's tasks.
  if (!baseUrl || !model || !/^https?:\/\//.test(baseUrl) || (e.via !== null && e.via !== undefined)) return null;
  const topK = s.topK === null ? null : num(s.topK);
  // The key by its secret's name: Play with a model keeps apiKeySecret, a sweep's run record apiKeyEnv.
  const key = secretName(e.apiKeySecret) ?? secretName(e.apiKeyEnv);
  return {
    kind: 'model',
    baseUrl,
    model,
    ...(num(s.temperature) !== undefined ? { temperature: num(s.temperature) } : {}),
    ...(num(s.topP) !== undefined ? { topP: num(s.topP) } : {}),
    ...(topK !== undefined ? { topK } : {}),
    ...(num(s.maxTokens) !== undefined ? { maxTokens: num(s.maxTokens) } : {}),
    ...(typeof s.thinking === 'boolean' ? { thinking: s.thinking } : {}),
    ...(key ? { apiKeySecret: key } : {}),
    ...(num(e.turnTimeoutSec) !== undefined ? { turnTimeoutSec: num(e.turnTimeoutSec) } : {}),
    ...(num(e.retries) !== undefined ? { retries: num(e.retries) } : {}),
  };
}

/**
 * The served models this app already knows: the endpoint Play with a model saved, then those of
 * earlier model runs (newest first), each endpoint and model once.
 */
export function savedModels(runs: CallOutput<'runs.list'>['rows']): ModelPolicy[] {
  const out: ModelPolicy[] = [];
  const add = (p: ModelPolicy | null) => {
    if (p && !out.some((x) => x.baseUrl === p.baseUrl && x.model === p.model)) out.push(p);
  };
  try {
    const saved = JSON.parse(localStorage.getItem(LLM_ENDPOINT_KEY) ?? 'null') as unknown;
    if (saved && typeof saved === 'object') add(asPolicy(saved as Record<string, unknown>));
  } catch {
    // A corrupt saved value offers nothing; the runs still do.
  }
  for (const r of runs) add(asPolicy(r.config.endpoint, r.config.sampling));
  return out;
}

export function modelKey(p: ModelPolicy): string {
  return `${p.model} @ ${p.baseUrl}`;
}
