import { useEffect } from 'react';
import { create } from 'zustand';
import { errorMessage, type CallInput, type EnvDetail, type EventPayload } from '../../../core/api';
import { backend } from './app';
import { attempt, type CallOptions } from './report';

type Change = EventPayload<'memory.changed'>;

/**
 * The environments every view shows, held once. Views read them from here (useEnvironment) and
 * change them only through `environments` below; core's `memory.changed` event is the one way
 * new values arrive, so a seed flag set in the library reaches an open editor tab, the detail tab
 * and the list at once.
 */
interface EnvironmentsState {
  byId: Record<number, EnvDetail>;
  /** Why an environment could not be loaded, for the view that asked for it. */
  errors: Record<number, string>;
  /** The last change core announced, numbered: lists of query results (the library) reload on it. */
  change: { seq: number } & Change;
}

export const useEnvironments = create<EnvironmentsState>(() => ({ byId: {}, errors: {}, change: { seq: 0, reason: 'start' } }));

const inflight = new Map<number, Promise<EnvDetail>>();
/** How many mounted views read each environment: only those are kept and refreshed. */
const readers = new Map<number, number>();

/**
 * Asks core for an environment and keeps it. Concurrent asks for one id share the call, except
 * `fresh` ones (after a change): an answer that left before the change must not win over it.
 */
export function loadEnvironment(id: number, fresh = false): Promise<EnvDetail> {
  const pending = inflight.get(id);
  if (pending && !fresh) return pending;
  const p: Promise<EnvDetail> = backend()
    .call('memory.get', { id })
    .then(
      (env) => {
        // Only the newest ask is kept; one for a view that has since closed is not (nothing would drop it).
        if (inflight.get(id) === p) keep(env);
        return env;
      },
      (e: unknown) => {
        if (inflight.get(id) === p && readers.has(id)) useEnvironments.setState((s) => ({ errors: { ...s.errors, [id]: errorMessage(e) } }));
        throw e;
      },
    )
    .finally(() => {
      if (inflight.get(id) === p) inflight.delete(id);
    });
  inflight.set(id, p);
  return p;
}

/** Keeps an environment a call returned whole, while some view reads it. */
function keep(env: EnvDetail): void {
  if (!readers.has(env.id)) return;
  useEnvironments.setState((s) => {
    const { [env.id]: _, ...errors } = s.errors;
    return { byId: { ...s.byId, [env.id]: env }, errors };
  });
}

function patchHeld(ids: number[], patch: Partial<EnvDetail>): void {
  useEnvironments.setState((s) => {
    const byId = { ...s.byId };
    for (const id of ids) if (byId[id]) byId[id] = { ...byId[id], ...patch };
    return { byId };
  });
}

/**
 * The environment with this id, loaded on first use and kept current by core's change events.
 * `known`: the same environment a call just returned whole (the editor's editor.open), kept instead
 * of asking core for it again (its source would cross the socket twice).
 */
export function useEnvironment(id: number, known?: EnvDetail): { env: EnvDetail | undefined; error: string | null } {
  const env = useEnvironments((s) => s.byId[id]);
  const error = useEnvironments((s) => s.errors[id] ?? null);
  useEffect(() => {
    watchEnvironments();
    readers.set(id, (readers.get(id) ?? 0) + 1);
    if (!useEnvironments.getState().byId[id]) {
      if (known?.id === id) keep(known);
      // The failure is kept in the store's errors and shown by the view.
      else loadEnvironment(id).catch(() => undefined);
    }
    return release(id);
    // `known` seeds the first read only: later values arrive as change events.
  }, [id]);
  return { env, error };
}

function release(id: number): () => void {
  return () => {
    const left = (readers.get(id) ?? 1) - 1;
    if (left > 0) return void readers.set(id, left);
    // Nobody shows it any more: it is neither kept nor refreshed on every change.
    readers.delete(id);
    useEnvironments.setState((s) => {
      const { [id]: _env, ...byId } = s.byId;
      const { [id]: _error, ...errors } = s.errors;
      return { byId, errors };
    });
  };
}

function reloadHeld(ids: number[] | undefined): void {
  // Every environment a view reads, also one whose first answer is still on its way.
  const held = [...readers.keys()];
  // A failed refresh keeps what is shown and records why (loadEnvironment).
  for (const id of ids ? held.filter((h) => ids.includes(h)) : held) loadEnvironment(id, true).catch(() => undefined);
}

let watching = false;
/** Subscribes once to core's changes; called by every reader, so no view needs its own listener. */
export function watchEnvironments(): void {
  if (watching) return;
  watching = true;
  backend().on('memory.changed', (c) => {
    useEnvironments.setState((s) => ({ change: { ...c, seq: s.change.seq + 1 } }));
    reloadHeld(c.ids);
  });
  // Events sent while the socket was down are lost: everything held is asked for again.
  backend().onConnection((state) => {
    if (state === 'connected') {
      useEnvironments.setState((s) => ({ change: { seq: s.change.seq + 1, reason: 'reconnect' } }));
      reloadHeld(undefined);
    }
  });
}

const SOURCE = 'library';

/**
 * The one way the UI changes what is said about environments. Each resolves to true when core
 * took the change; a failure is reported once (status bar and Logs) and resolves to false.
 */
export const environments = {
  async setSeed(ids: number[], seed: boolean): Promise<boolean> {
    // The box a person clicked moves at once (a checkbox that waits on the engine looks broken); a
    // refusal puts each environment back as it was and says why.
    const before = ids.map((id) => [id, useEnvironments.getState().byId[id]?.seed] as const);
    patchHeld(ids, { seed });
    const ok = await attempt(SOURCE, seed ? 'Seed' : 'Unseed', () => backend().call('memory.setSeed', { ids, seed }), {
      rollback: () => {
        for (const [id, was] of before) if (was !== undefined) patchHeld([id], { seed: was });
      },
    });
    return ok !== undefined;
  },
  async tag(ids: number[], change: { add?: string[]; remove?: string[] }): Promise<boolean> {
    const label = change.add?.length ? 'Tag' : 'Untag';
    // Core keeps tags in its own order: the change event brings the list back.
    return (await attempt(SOURCE, label, () => backend().call('memory.tag', { ids, add: change.add ?? [], remove: change.remove ?? [] }))) !== undefined;
  },
  /**
   * A measured result (a regret run's returns with and without the hint) as the stats of the
   * environment holding `hash`; every view of it shows the new numbers at once. `opts` lets the
   * view that measured say a failure on its own line.
   */
  async setStats(stats: CallInput<'memory.setStats'>, opts: CallOptions = {}): Promise<boolean> {
    const env = await attempt(SOURCE, 'Store the stats', () => backend().call('memory.setStats', stats), opts);
    if (env === undefined) return false;
    keep(env);
    return true;
  },
  async update(id: number, patch: { notes?: string; rating?: number | null; skill?: string | null; name?: string; hint?: string }, label = 'Update'): Promise<boolean> {
    const env = await attempt(SOURCE, label, () => backend().call('memory.update', { id, ...patch }));
    if (env === undefined) return false;
    keep(env);
    return true;
  },
};
