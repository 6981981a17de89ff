import type { CallName } from '../../core/api';

/**
 * Valid example inputs for every call in the contract, run in order against two fresh,
 * identical apps (one in-process, one over WebSocket). `volatile` names result fields that
 * legitimately differ between two runs (clocks, generated ids) and are dropped before comparing.
 * The contract test fails when a call has no sample here, so a new call cannot skip it.
 */
export interface Sample {
  call: CallName;
  input: unknown;
  volatile?: string[];
}

export const samples: Sample[] = [
  { call: 'app.info', input: {}, volatile: ['dataDir', 'databasePath'] },
  { call: 'app.health', input: {}, volatile: ['uptimeSec'] },
  { call: 'settings.get', input: {} },
  { call: 'settings.update', input: { theme: 'dark', maxTurns: 30 } },
  { call: 'settings.get', input: {} },
  { call: 'app.openExternal', input: { url: 'https://arxiv.org/abs/2608.19197' } },
];

/** Inputs each call must refuse, beyond the generic ones the test sends to every call. */
export const invalidSamples: { call: CallName; input: unknown }[] = [
  { call: 'settings.update', input: { theme: 'purple' } },
  { call: 'settings.update', input: { stepTimeoutSec: 0 } },
  { call: 'app.openExternal', input: { url: 'file:///etc/passwd' } },
  { call: 'app.openExternal', input: { url: 'x'.repeat(5000) } },
];
