import type { z } from 'zod';
import { ApiError, calls, errorMessage, isCallName, type CallName, type CallOutput, type Calls } from '../api';
import { DomainError } from '../errors';
import { issuesSentence } from '../api/issueSentence';

/**
 * Cancellation is not part of the context: no handler could honour an abort signal (the work it
 * starts is owned by services with their own cancel calls, e.g. `memory.importCancel`), so a
 * signal here would only promise something nothing does.
 */
export interface CallContext {
  /** Which transport delivered the call; handlers must not behave differently, only log it. */
  transport: 'electron' | 'websocket' | 'http' | 'in-process';
}

export type Handler<N extends CallName> = (
  input: z.output<Calls[N]['input']>,
  ctx: CallContext,
) => Promise<CallOutput<N>> | CallOutput<N>;

export type Handlers = { [N in CallName]: Handler<N> };

/** Always rejects with an ApiError: transports send `error.toJSON()` and need no fallback of their own. */
export type Dispatch = (name: unknown, input: unknown, ctx: CallContext) => Promise<unknown>;

function zodIssues(err: z.ZodError): { path: string; message: string }[] {
  return err.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * The one place a thrown value becomes a contract error. A DomainError keeps its own code; an
 * ApiError passes through (code in core/api and transports that re-raise one from the wire); any
 * other throw is a bug, so it is logged with its stack and shown as `internal`.
 */
export function toApiError(e: unknown, callName: string, log: (msg: string) => void): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof DomainError) return new ApiError(e.code, e.message, e.details);
  log(`${callName} failed unexpectedly: ${e instanceof Error && e.stack ? e.stack : errorMessage(e)}`);
  return new ApiError('internal', `${callName} failed: ${errorMessage(e)}`);
}

/** Where a transport sends an error status code (HTTP) it comes from the contract code, once. */
export function httpStatusOf(code: ApiError['code']): number {
  switch (code) {
    case 'invalid_input':
    case 'unknown_call':
      return 400;
    case 'unauthorized':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
      return 409;
    case 'cancelled':
      return 499;
    case 'timeout':
      return 504;
    case 'unavailable':
      return 503;
    default:
      return 500;
  }
}

/**
 * The single entry every transport funnels into: the call name is checked against the contract,
 * the input parsed with its schema (the sender is never trusted), and whatever the handler throws
 * becomes a typed ApiError, so every transport returns the same result for the same request.
 */
export function createDispatcher(handlers: Handlers, log: (msg: string) => void = (m) => console.error(m)): Dispatch {
  return async (name, input, ctx) => {
    if (!isCallName(name)) throw new ApiError('unknown_call', `Unknown call: ${String(name).slice(0, 200)}`);
    const def = calls[name];
    const parsed = def.input.safeParse(input ?? {});
    if (!parsed.success) {
      // Parsed again with reportInput, so a missing field (input undefined) reads "is required", not
      // "must be a number". Only refused input pays for it: passing reportInput on every call put
      // zod on a slower path for all of them (load.ws_cpu_us_per_call, bench/notes/bench-issue35.md).
      const reported = def.input.safeParse(input ?? {}, { reportInput: true });
      const error = reported.success ? parsed.error : reported.error;
      // People read sentences; scripts read the issues (path and zod's message) in details.
      throw new ApiError('invalid_input', issuesSentence(error.issues), { call: name, issues: zodIssues(error) });
    }
    let result: unknown;
    try {
      const handler = handlers[name] as (i: unknown, c: CallContext) => unknown;
      result = await handler(parsed.data, ctx);
    } catch (e) {
      throw toApiError(e, name, log);
    }
    const out = def.output.safeParse(result);
    if (!out.success) {
      log(`${name} returned a value outside its contract: ${JSON.stringify(zodIssues(out.error)).slice(0, 2000)}`);
      throw new ApiError('internal', `${name} returned a value outside its contract`);
    }
    return out.data;
  };
}
