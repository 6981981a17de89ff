import type { z } from 'zod';
import { appCalls, appEvents } from './calls/app';
import { memoryCalls, memoryEvents } from './calls/memory';
import { editorCalls } from './calls/editor';
import { runtimeCalls } from './calls/runtime';
import { jobsCalls, jobsEvents } from './calls/jobs';
import { episodesCalls, episodesEvents } from './calls/episodes';
import { auditCalls, auditEvents } from './calls/audit';
import { modelsCalls } from './calls/models';

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
  ...episodesCalls,
  ...auditCalls,
  ...modelsCalls,
} as const;

export const events = {
  ...appEvents,
  ...memoryEvents,
  ...jobsEvents,
  ...episodesEvents,
  ...auditEvents,
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

export * from './errors';
export * from './backend';
export type { Settings } from './calls/app';
export type { Diagnostic, Draft, LoadCheck } from './calls/editor';
export type { EnvSummary, EnvDetail, VersionInfo, MemoryFilters, MemorySort, ImportSummary, ImportProgress } from './calls/memory';
export type { RuntimeStatus, StepRecord, ResetRecord, HarnessErrorData } from './calls/runtime';
