/**
 * What serve-env serves: the environment versions of a selection (or named by id or hash) and the
 * task list, one task per version, seed and hint arm, in a fixed order (GET /tasks).
 */
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { getEnvironment, getEnvironmentByHash, getVersion, search } from '../memory/repository';

export type HintMode = 'on' | 'off' | 'both';

export interface ServedEnv {
  hash: string;
  name: string | null;
  envId: number | null;
  hint: string | null;
}

export interface Task {
  task_id: string;
  index: number;
  env_hash: string;
  env_name: string | null;
  seed: number;
  hint: boolean;
}

const FULL_HASH = /^[0-9a-f]{64}$/;

/** One ENV_ID: a library id (a number), a version hash, or a unique prefix (8+ hex) of a head hash. */
function resolveOne(db: Db, ref: string): ServedEnv {
  const r = ref.trim().toLowerCase();
  if (FULL_HASH.test(r)) {
    if (!getVersion(db, r)) throw new DomainError('not_found', `No environment version ${r.slice(0, 12)} in the library`);
    const env = getEnvironmentByHash(db, r);
    return { hash: r, name: env?.name ?? null, envId: env?.id ?? null, hint: env?.hint ?? null };
  }
  if (/^\d+$/.test(r)) {
    const env = getEnvironment(db, Number(r));
    if (!env) throw new DomainError('not_found', `No environment ${r} in the library`);
    return { hash: env.hash, name: env.name, envId: env.id, hint: env.hint };
  }
  if (/^[0-9a-f]{8,63}$/.test(r)) {
    const rows = search(db, { query: `hash:${r}`, limit: 3, filters: {} }).rows;
    if (rows.length !== 1) throw new DomainError(rows.length ? 'invalid_input' : 'not_found', rows.length ? `The hash prefix ${r} names ${rows.length} environments; give more of it` : `No environment with hash ${r}… in the library`);
    return resolveOne(db, String(rows[0]!.id));
  }
  throw new DomainError('invalid_input', `${ref} is not an environment id (a number) or a version hash (8+ hex characters)`);
}

export function resolveEnvs(db: Db, input: { selection?: string; ids?: string[] }): { envs: ServedEnv[]; skipped: string[] } {
  const skipped: string[] = [];
  let found: ServedEnv[];
  if (input.selection !== undefined) {
    const rows = search(db, { query: input.selection, limit: 10_000, filters: {} }).rows;
    found = rows.map((e) => ({ hash: e.hash, name: e.name, envId: e.id, hint: getEnvironment(db, e.id)?.hint ?? null }));
  } else {
    found = (input.ids ?? []).map((id) => resolveOne(db, id));
  }
  const envs: ServedEnv[] = [];
  const seen = new Set<string>();
  for (const e of found) {
    if (seen.has(e.hash)) continue;
    seen.add(e.hash);
    const detail = e.envId !== null ? getEnvironment(db, e.envId) : null;
    // SPADE plays a tool-use environment through its tool loop (execute_tool calls between steps),
    // which this server's text actions do not carry yet: such environments are left out, said so.
    if (detail?.kind === 'tool-use') {
      skipped.push(`${e.name ?? e.hash.slice(0, 12)}: a tool-use environment (not served: its tool calls have no OpenEnv action here yet)`);
      continue;
    }
    envs.push(e);
  }
  return { envs, skipped };
}

/** The task list: every served version x seed x hint arm (SPADE plays a game without a hint only unhinted). */
export function taskList(envs: ServedEnv[], o: { seeds: number; seedStart: number; hint: HintMode }): Task[] {
  const tasks: Task[] = [];
  for (const e of envs) {
    const arms = o.hint === 'both' ? [true, false] : [o.hint === 'on'];
    for (let s = o.seedStart; s < o.seedStart + o.seeds; s++) {
      for (const hint of arms) {
        if (hint && e.hint === null) continue;
        tasks.push({ task_id: `${e.hash.slice(0, 12)}:${s}:${hint ? 'hint' : 'nohint'}`, index: tasks.length, env_hash: e.hash, env_name: e.name, seed: s, hint });
      }
    }
  }
  return tasks;
}
