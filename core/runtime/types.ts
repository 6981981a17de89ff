/** What the harness (native/harness.py) answers, as the TypeScript side sees it. */
export interface HarnessError {
  kind: string;
  type: string;
  message: string;
  traceback?: string;
  line?: number;
  col?: number;
  stage?: string;
  missingModule?: string;
  frames?: { line: number; function: string }[];
  [k: string]: unknown;
}

export type HarnessReply =
  | { id: number | null; ok: true; result: unknown; output?: string }
  | { id: number | null; ok: false; error: HarnessError; output?: string };

export type HarnessCommand = 'ping' | 'check_syntax' | 'load' | 'reset' | 'step' | 'play' | 'state' | 'solution' | 'snapshot' | 'restore' | 'close' | (string & {});

export interface HarnessRequest {
  cmd: HarnessCommand;
  [k: string]: unknown;
}

/** A runtime that can carry harness requests for sessions it hosts. */
export interface RuntimeBackend {
  readonly kind: 'pyodide' | 'cpython';
}

export function failure(kind: string, message: string, extra: Partial<HarnessError> = {}): HarnessReply {
  return { id: null, ok: false, error: { kind, type: kind, message, ...extra } };
}
