import type { AuditOptions } from '../audit/types';

/**
 * The requests the Python harness answers (native/harness.py BUILTIN_COMMANDS, plus the audit's
 * `audit` command), one type per command: every runtime (Pyodide pool, native fork server) and
 * every caller (episodes, editor, audit, models) speaks this one channel. Replies are
 * `HarnessReply` (./types); a command's own result shape is read where it is used.
 */
export interface LoadOptions {
  /** SPADE's budget (SpadeConfig.max_turns); a game's own max_turns is capped to it. */
  maxTurns?: number;
  /** 'legacy': SPADE's pool admission instantiation (Cls(max_turns=...) first). */
  mode?: 'respect' | 'legacy';
  /** The workbench's labelled option: seeded global generators (never SPADE's default). */
  deterministic?: boolean;
  /** Whether replies carry SPADE's wrapper conversion (`spade` fields); on by default. */
  spadeMode?: boolean;
  /** Per-call limit inside the interpreter, seconds. */
  timeoutSec?: number;
}

export type HarnessRequest =
  | { cmd: 'ping' }
  | { cmd: 'check_syntax'; source: string }
  | { cmd: 'load'; source: string; options?: LoadOptions }
  | { cmd: 'reset'; seed?: number | null }
  | { cmd: 'step'; action: string }
  | { cmd: 'play'; actions: readonly string[]; seed?: number | null; reset?: boolean; stopWhenDone?: boolean; state?: boolean }
  | { cmd: 'state' }
  | { cmd: 'solution' }
  | { cmd: 'snapshot' }
  | { cmd: 'restore'; token: string }
  | { cmd: 'get_tools' }
  | { cmd: 'tool'; name: string; arguments: Record<string, unknown> }
  | { cmd: 'close' }
  | { cmd: 'audit'; source: string; options: AuditOptions & { phases?: boolean } };

/** What goes on the wire: the request, routed to a session, with the host's own limit. */
export type WireRequest = HarnessRequest & { session?: string; timeoutSec?: number };
