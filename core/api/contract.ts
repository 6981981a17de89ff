import type { z } from 'zod';

/**
 * One declaration per call: the name is the wire name on every transport, the schemas are the
 * only source of truth for what crosses it (validated on the receiving side, never trusted).
 */
export interface CallDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly input: I;
  readonly output: O;
  readonly summary: string;
}

export interface EventDef<P extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly payload: P;
  readonly summary: string;
}

export function defineCall<I extends z.ZodType, O extends z.ZodType>(def: CallDef<I, O>): CallDef<I, O> {
  return def;
}

export function defineEvent<P extends z.ZodType>(def: EventDef<P>): EventDef<P> {
  return def;
}
