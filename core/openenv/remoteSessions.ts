/**
 * The app's sessions on environments other OpenEnv servers serve (a URL): each holds one /ws session
 * and the record of what was played on it (url, seed, hint, every action and what came back), so a
 * person steps it, resets it, replays the record on a fresh session (the first turn that differs is
 * flagged) and audits the server over the wire. Records live as long as the app (no library version
 * stands behind them); a failure is kept as the record's last turn, never thrown away.
 */
import { DomainError } from '../errors';
import { errorMessage } from '../api/errorMessage';
import { DEFAULT_LIMITS, describeServer, parseServerUrl, WireSession, type ClientLimits, type ServerInfo } from './client';
import { actionFor, pinOf, resetData, turnOf, withoutEpisodeIds, type RemoteTurn } from './remotePlay';
import { auditWire, type WireAudit } from './wireAudit';

export interface RemoteView {
  id: string;
  url: string;
  server: { name: string | null; version: string | null; description: string | null; hintMode: ServerInfo['hintMode']; textField: string | null; actionSchema: Record<string, unknown> };
  seed: number | null;
  hint: boolean;
  live: boolean;
  done: boolean;
  turns: RemoteTurn[];
  /** Set by replay: the first turn of the record that the fresh session answered differently; null when none. */
  replay: { divergence: number | null; replayed: number; message: string } | null;
  audit: WireAudit | null;
}

interface Entry {
  info: ServerInfo;
  session: WireSession | null;
  seed: number | null;
  hint: boolean;
  turns: RemoteTurn[];
  replay: RemoteView['replay'];
  audit: WireAudit | null;
  busy: Promise<unknown>;
}

const MAX_OPEN = 32;
const MAX_TURNS = 10_000;

export class RemoteSessions {
  private readonly entries = new Map<string, Entry>();
  private seq = 0;

  constructor(private readonly limits: ClientLimits = DEFAULT_LIMITS) {}

  private view(id: string): RemoteView {
    const e = this.get(id);
    const m = e.info.metadata;
    const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 2000) : null);
    return {
      id,
      url: e.info.url,
      server: { name: str(m.name), version: str(m.version), description: str(m.description), hintMode: e.info.hintMode, textField: e.info.textField, actionSchema: e.info.schema.action },
      seed: e.seed,
      hint: e.hint,
      live: !!e.session && !e.session.closed,
      done: e.turns.at(-1)?.done ?? false,
      turns: e.turns,
      replay: e.replay,
      audit: e.audit,
    };
  }

  private get(id: string): Entry {
    const e = this.entries.get(id);
    if (!e) throw new DomainError('not_found', `No OpenEnv session ${id} (they last as long as the app)`);
    return e;
  }

  /** One operation per session at a time, in order. */
  private one<T>(id: string, fn: (e: Entry) => Promise<T>): Promise<T> {
    const e = this.get(id);
    const next = e.busy.catch(() => {}).then(() => fn(e));
    e.busy = next;
    return next;
  }

  private async resetOn(e: Entry, seed: number | null): Promise<void> {
    if (!e.session || e.session.closed) e.session = await WireSession.open(e.info.url, this.limits);
    const r = await e.session.reset({ ...resetData(e.info, seed, e.hint), ...pinOf(e.info) });
    e.seed = seed;
    e.turns.push(turnOf(e.turns.length, null, null, r));
  }

  async open(url: string, seed: number | null, hint: boolean): Promise<RemoteView> {
    if (this.entries.size >= MAX_OPEN) throw new DomainError('conflict', `${MAX_OPEN} OpenEnv sessions are open; close one first`);
    const info = await describeServer(parseServerUrl(url), this.limits);
    resetData(info, seed, hint); // refuses a hint the server has not, before a session is opened
    const e: Entry = { info, session: null, seed, hint, turns: [], replay: null, audit: null, busy: Promise.resolve() };
    try {
      await this.resetOn(e, seed);
    } catch (err) {
      await e.session?.close();
      throw err;
    }
    const id = `remote-${++this.seq}`;
    this.entries.set(id, e);
    return this.view(id);
  }

  step(id: string, text: string): Promise<RemoteView> {
    return this.one(id, async (e) => {
      if (e.turns.length >= MAX_TURNS) throw new DomainError('conflict', `This record has ${MAX_TURNS} turns; reset or open another`);
      const action = actionFor(e.info, text);
      if (!e.session || e.session.closed) throw new DomainError('conflict', 'The session is gone (the server dropped it, or it failed): reset to open a fresh one');
      try {
        e.turns.push(turnOf(e.turns.length, text, action, await e.session.step(action)));
      } catch (err) {
        // The server's refusal (a malformed action, a step after the end) leaves the session as it was.
        e.turns.push({ idx: e.turns.length, text, action, observation: null, reward: null, done: false, error: errorMessage(err) });
      }
      return this.view(id);
    });
  }

  reset(id: string, seed: number | null): Promise<RemoteView> {
    return this.one(id, async (e) => {
      await this.resetOn(e, seed);
      return this.view(id);
    });
  }

  /** Plays the record's actions again on a fresh session and flags the first turn that differs. */
  replay(id: string): Promise<RemoteView> {
    return this.one(id, async (e) => {
      const start = e.turns.reduce((k, t, i) => (t.text === null ? i : k), 0);
      const rec = e.turns.slice(start);
      const s = await WireSession.open(e.info.url, this.limits);
      let divergence: number | null = null;
      let replayed = 0;
      const same = (a: RemoteTurn, b: RemoteTurn) => JSON.stringify([withoutEpisodeIds(a.observation), a.reward, a.done, a.error !== null]) === JSON.stringify([withoutEpisodeIds(b.observation), b.reward, b.done, b.error !== null]);
      try {
        for (const t of rec) {
          let again: RemoteTurn;
          if (t.text === null) again = turnOf(t.idx, null, null, await s.reset({ ...resetData(e.info, e.seed, e.hint), ...pinOf(e.info) }));
          else
            again = await s.step(t.action!).then(
              (r) => turnOf(t.idx, t.text, t.action, r),
              (err: unknown) => ({ ...t, observation: null, reward: null, error: errorMessage(err) }),
            );
          replayed++;
          if (!same(t, again)) {
            divergence = t.idx;
            break;
          }
        }
      } finally {
        await s.close();
      }
      e.replay = { divergence, replayed, message: divergence === null ? `The ${replayed} turn(s) since the last reset replayed the same on a fresh session` : `Turn ${divergence} differs when replayed on a fresh session` };
      return this.view(id);
    });
  }

  audit(id: string): Promise<RemoteView> {
    return this.one(id, async (e) => {
      e.audit = await auditWire(e.info.url, { limits: this.limits });
      return this.view(id);
    });
  }

  show(id: string): RemoteView {
    return this.view(id);
  }

  list(): RemoteView[] {
    return [...this.entries.keys()].map((id) => this.view(id));
  }

  async close(id: string): Promise<boolean> {
    const e = this.entries.get(id);
    if (!e) return false;
    this.entries.delete(id);
    await e.session?.close();
    return true;
  }

  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.session?.close()));
  }
}

