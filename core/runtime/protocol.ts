import type { BuiltinRequest, LoadOptions } from './harnessMessages';

export type { LoadOptions };

/**
 * The requests the Python harness answers (native/harness.py BUILTIN_COMMANDS, plus the audit's
 * `audit` command), one type per command: every runtime (Pyodide pool, native fork server) and
 * every caller (episodes, editor, audit, models) speaks this one channel. The commands and their
 * replies are defined once in ./harnessMessages.
 */
export type HarnessRequest = BuiltinRequest;

/** What goes on the wire: the request, routed to a session, with the host's own limit. */
export type WireRequest = HarnessRequest & { session?: string; timeoutSec?: number };
