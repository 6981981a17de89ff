import type { z } from 'zod';
import { ApiError, calls, isCallName, type CallName, type CallOutput, type Calls } from '../api';

export interface CallContext {
  /** Which transport delivered the call; handlers must not behave differently, only log it. */
  transport: 'electron' | 'websocket' | 'http' | 'in-process';
  /** Aborted when the caller goes away (socket closed, window destroyed). */
  signal?: AbortSignal;
}

export type Handler<N extends CallName> = (
  input: z.output<Calls[N]['input']>,
  ctx: CallContext,
) => Promise<CallOutput<N>> | CallOutput<N>;

export type Handlers = { [N in CallName]: Handler<N> };

export type Dispatch = (name: unknown, input: unknown, ctx: CallContext) => Promise<unknown>;

function zodIssues(err: z.ZodError): { path: string; message: string }[] {
  return err.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * The single entry every transport funnels into: the call name is checked against the contract,
 * the input parsed with its schema (the sender is never trusted), and whatever the handler throws
 * becomes a typed ApiError, so every transport returns the same result for the same request.
 */
export function createDispatcher(handlers: Handlers, log?: (msg: string) => void): Dispatch {
  return async (name, input, ctx) => {
    if (!isCallName(name)) throw new ApiError('unknown_call', `Unknown call: ${String(name).slice(0, 200)}`);
    const def = calls[name];
    const parsed = def.input.safeParse(input ?? {});
    if (!parsed.success) {
      const issues = zodIssues(parsed.error);
      const first = issues[0];
      throw new ApiError(
        'invalid_input',
        `Invalid input for ${name}: ${first ? `${first.path || '(root)'}: ${first.message}` : 'rejected'}`,
        { issues },
      );
    }
    let result: unknown;
    try {
      const handler = handlers[name] as (i: unknown, c: CallContext) => unknown;
      result = await handler(parsed.data, ctx);
    } catch (e) {
      if (e instanceof ApiError) throw e;
      const message = e instanceof Error ? e.message : String(e);
      log?.(`${name} failed: ${e instanceof Error && e.stack ? e.stack : message}`);
      throw new ApiError('internal', `${name} failed: ${message}`);
    }
    const out = def.output.safeParse(result);
    if (!out.success) {
      log?.(`${name} returned a value outside its contract: ${JSON.stringify(zodIssues(out.error)).slice(0, 2000)}`);
      throw new ApiError('internal', `${name} returned a value outside its contract`);
    }
    return out.data;
  };
}
