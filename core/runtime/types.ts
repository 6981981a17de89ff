/**
 * The harness's replies as the TypeScript side sees them. The shapes live once, in
 * ./harnessMessages (zod, from which native/harness_messages.py is generated); this module keeps
 * the names the runtimes import and the one helper that builds a failed reply on the host side.
 */
import type { HarnessError, HarnessErrorKind, HarnessReply } from './harnessMessages';

export type { HarnessError, HarnessErrorKind, HarnessReply, SpadeValidation } from './harnessMessages';

/** A failure the host itself reports (the harness never answered): same shape as the harness's own. */
export function failure(kind: HarnessErrorKind, message: string, extra: Partial<HarnessError> = {}): HarnessReply {
  return { id: null, ok: false, error: { kind, type: kind, message, ...extra } };
}
