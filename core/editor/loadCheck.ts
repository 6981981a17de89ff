import type { LoadCheck } from '../api/calls/editor';
import type { Services } from '../services/services';

/**
 * SPADE's quick loading checks (section 5: exec, class, instantiate, reset, step) belong to the
 * sandboxed runtime; environment code is never run here. Until a runtime is part of Services this
 * says so instead of pretending the source passed.
 */
export async function quickLoadCheck(s: Services, source: string): Promise<LoadCheck> {
  void s;
  void source;
  return { ran: false, ok: false, detail: 'No sandboxed runtime is available to run the loading checks', diagnostics: [] };
}
