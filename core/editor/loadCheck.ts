import type { Diagnostic, LoadCheck } from '../api/calls/editor';
import type { HarnessError, HarnessReply } from '../runtime/types';
import type { RuntimeService } from '../runtime/service';

/**
 * SPADE's quick loading checks (SPADE-FORMATS section 5, steps 1-5) run in the sandboxed runtime,
 * never here: load (exec, class, instantiate), reset(seed=42), up to three boxed probe actions,
 * reset(seed=123). Each failure is a diagnostic with the line SPADE's message would be about.
 */
const PROBES = ['\\boxed{1}', '\\boxed{test}', '\\boxed{42}'];

function lineOf(source: string, re: RegExp): number {
  const lines = source.split('\n');
  const i = lines.findIndex((l) => re.test(l));
  return i >= 0 ? i + 1 : 1;
}

function diag(source: string, message: string, stage: string, line?: number | null, col?: number | null, severity: Diagnostic['severity'] = 'error'): Diagnostic {
  const lines = source.split('\n');
  const l = Math.min(Math.max(1, line ?? 1), Math.max(1, lines.length));
  const text = lines[l - 1] ?? '';
  const indent = text.length - text.trimStart().length;
  const c = col && col > 0 ? Math.min(col, text.length + 1) : indent + 1;
  return { severity, message, line: l, column: c, endLine: l, endColumn: Math.max(c + 1, text.length + 1), source: 'spade-load', stage };
}

function errLine(source: string, e: HarnessError, fallback: RegExp): number {
  return typeof e.line === 'number' && e.line > 0 ? e.line : lineOf(source, fallback);
}

const RESET_RE = /^\s+def\s+reset\s*\(/;
const STEP_RE = /^\s+def\s+step\s*\(/;
const CLASS_RE = /^class\s+\w+/;

export async function quickLoadCheck(runtime: RuntimeService, source: string): Promise<LoadCheck> {
  const out: Diagnostic[] = [];
  const opened = await runtime.open({ source, runtime: 'auto', label: 'editor load check' });
  if (!opened.ok) {
    const e = opened.error;
    if (e.kind === 'unavailable') return { ran: false, ok: false, detail: e.message, diagnostics: [] };
    const stage = typeof e.stage === 'string' ? e.stage : 'load';
    out.push(diag(source, `${e.message}${e.type && !e.message.includes(e.type) ? ` (${e.type})` : ''}`, stage, errLine(source, e, CLASS_RE), e.col ?? null));
    return { ran: true, ok: false, detail: `${opened.runtime}: ${e.message}`, diagnostics: out };
  }
  const sid = opened.sessionId;
  const call = (req: Record<string, unknown>): Promise<HarnessReply> => runtime.call(sid, req);
  try {
    {
      const label = 'Game reset() failed';
      const r = await call({ cmd: 'reset', seed: 42 });
      if (!r.ok) {
        out.push(diag(source, `${label}: ${r.error.message}`, 'reset', errLine(source, r.error, RESET_RE)));
        return done();
      }
      const res = r.result as { observation: unknown; shape: string; types: string[] };
      if (res.shape === 'str') out.push(diag(source, 'reset() returns a bare str; SPADE expects (observation, info)', 'reset', lineOf(source, RESET_RE), null, 'warning'));
      else if (res.shape !== 'tuple2') out.push(diag(source, `${label}: reset() must return (observation: str, info: dict), got ${res.types.join(', ')}`, 'reset', lineOf(source, RESET_RE)));
      else {
        if (res.types[0] !== 'str' || res.observation === '') out.push(diag(source, `${label}: the observation must be a non-empty str (got ${res.types[0]})`, 'reset', lineOf(source, RESET_RE)));
        if (res.types[1] !== 'dict') out.push(diag(source, `${label}: info must be a dict (got ${res.types[1]})`, 'reset', lineOf(source, RESET_RE)));
      }
    }
    if (out.some((d) => d.severity === 'error')) return done();
    for (const [i, action] of PROBES.entries()) {
      const r = await call({ cmd: 'step', action });
      const label = `Game step() failed on action ${i + 1} (${action})`;
      if (!r.ok) {
        out.push(diag(source, `${label}: ${r.error.message}`, 'step', errLine(source, r.error, STEP_RE)));
        break;
      }
      const res = r.result as { shape: string; types: string[]; reward: unknown; terminated: unknown; truncated: unknown };
      if (res.shape !== 'tuple5') {
        out.push(diag(source, `${label}: step() must return a 5-tuple, got ${res.types.join(', ')}`, 'step', lineOf(source, STEP_RE)));
        break;
      }
      const [obsT, rewT, termT, truncT, infoT] = res.types;
      const problems: string[] = [];
      if (obsT !== 'str') problems.push(`observation is ${obsT}, not str`);
      if (rewT !== 'int' && rewT !== 'float' && rewT !== 'bool') problems.push(`reward is ${rewT}, not int or float`);
      else if (typeof res.reward === 'number' && (res.reward < -10 || res.reward > 10)) problems.push(`reward ${res.reward} is outside [-10, 10]`);
      if (termT !== 'bool') problems.push(`terminated is ${termT}, not bool`);
      if (truncT !== 'bool') problems.push(`truncated is ${truncT}, not bool`);
      if (infoT !== 'dict') problems.push(`info is ${infoT}, not dict`);
      if (problems.length) {
        out.push(diag(source, `${label}: ${problems.join('; ')}`, 'step', lineOf(source, STEP_RE)));
        break;
      }
      if (res.terminated === true || res.truncated === true) break;
    }
    if (!out.some((d) => d.severity === 'error')) {
      const r = await call({ cmd: 'reset', seed: 123 });
      if (!r.ok) out.push(diag(source, `Game reset() failed on second call: ${r.error.message}`, 'reset', errLine(source, r.error, RESET_RE)));
    }
    return done();
  } finally {
    await runtime.close(sid);
  }

  function done(): LoadCheck {
    const ok = !out.some((d) => d.severity === 'error');
    const where = opened.ok ? `${opened.runtime}${opened.fallbackReason ? ` (${opened.fallbackReason})` : ''}` : '';
    return { ran: true, ok, detail: ok ? `Passes SPADE's loading checks in ${where}` : `Fails SPADE's loading checks in ${where}`, diagnostics: out };
  }
}
