import type { z } from 'zod';
import { appCalls, appEvents } from './calls/app';
import { memoryCalls, memoryEvents } from './calls/memory';
import { editorCalls } from './calls/editor';
import { runtimeCalls } from './calls/runtime';
import { jobsCalls, jobsEvents } from './calls/jobs';
import { jobsGpuCalls } from './calls/jobsGpu';
import { episodesCalls, episodesEvents } from './calls/episodes';
import { auditCalls, auditEvents } from './calls/audit';
import { modelsCalls } from './calls/models';
import { runsCalls, runsEvents } from './calls/runs';
import { designCalls, designEvents } from './calls/design';
import { openenvCalls } from './calls/openenv';
import { openenvClientCalls } from './calls/openenvClient';
import { trainCalls } from './calls/train';

/**
 * The whole contract. Each domain declares its calls in calls/<domain>.ts and is spread in here;
 * the preload allowlist, both servers and the clients are all derived from these two objects.
 */
export const calls = {
  ...appCalls,
  ...memoryCalls,
  ...editorCalls,
  ...runtimeCalls,
  ...jobsCalls,
  ...jobsGpuCalls,
  ...episodesCalls,
  ...auditCalls,
  ...modelsCalls,
  ...runsCalls,
  ...designCalls,
  ...openenvCalls,
  ...openenvClientCalls,
  ...trainCalls,
} as const;

export const events = {
  ...appEvents,
  ...memoryEvents,
  ...jobsEvents,
  ...episodesEvents,
  ...auditEvents,
  ...runsEvents,
  ...designEvents,
} as const;

export type Calls = typeof calls;
export type CallName = keyof Calls;
export type CallInput<N extends CallName> = z.input<Calls[N]['input']>;
export type CallOutput<N extends CallName> = z.output<Calls[N]['output']>;
export type Events = typeof events;
export type EventName = keyof Events;
export type EventPayload<E extends EventName> = z.output<Events[E]['payload']>;

export const callNames = Object.keys(calls) as CallName[];
export const eventNames = Object.keys(events) as EventName[];

export function isCallName(name: unknown): name is CallName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(calls, name);
}
export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(events, name);
}

/**
 * Events are checked like calls, on both sides: the engine refuses to emit a payload outside its
 * schema, and every client parses what arrives before a listener sees it (a stale server, a bug,
 * or anything else on the wire gets dropped, not rendered). Returns the parsed payload or an error.
 */
export function parseEvent<E extends EventName>(name: E, payload: unknown): { ok: true; payload: EventPayload<E> } | { ok: false; error: string };
export function parseEvent(name: unknown, payload: unknown): { ok: true; payload: unknown } | { ok: false; error: string };
export function parseEvent(name: unknown, payload: unknown): { ok: true; payload: unknown } | { ok: false; error: string } {
  if (!isEventName(name)) return { ok: false, error: `unknown event ${String(name).slice(0, 100)}` };
  const r = events[name].payload.safeParse(payload);
  if (r.success) return { ok: true, payload: r.data };
  const first = r.error.issues[0];
  return { ok: false, error: `${name}: ${first ? `${first.path.map(String).join('.') || '(root)'}: ${first.message}` : 'rejected'}` };
}

export * from './errors';
export * from './schemas';
export * from './backend';
export type { Settings } from './calls/app';
export type { Diagnostic, Draft, LoadCheck } from './calls/editor';
export type { EnvSummary, EnvDetail, VersionInfo, MemoryFilters, MemorySort, ImportSummary, ImportProgress } from './calls/memory';
export type { RuntimeStatus, StepReply, ResetReply, HarnessErrorData } from './calls/runtime';
