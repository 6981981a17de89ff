import { useState } from 'react';
import type { RunInput } from './useEpisode';

/** Typed actions: Enter steps. */
export function ActionBar({ onAct, onReset, busy, testId = 'action-input', label = 'Step' }: { onAct(a: string): void; onReset?: () => void; busy: boolean; testId?: string; label?: string }) {
  const [text, setText] = useState('');
  const go = () => {
    if (!text.trim()) return;
    onAct(text);
  };
  return (
    <div className="ep-actionbar">
      <input
        data-testid={testId}
        placeholder="\boxed{...} then Enter"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') go();
        }}
      />
      <button className="primary" disabled={busy} onClick={go} data-testid={`${testId}-go`}>
        {label}
      </button>
      {onReset ? (
        <button disabled={busy} onClick={onReset} title="Reset the same instance again with the episode's seed (shows state leaking across reset)" data-testid="reset-again">
          Reset again
        </button>
      ) : null}
    </div>
  );
}

type PolicyKind = 'script' | 'solution' | 'random' | 'file';
type UntilKind = 'done' | 'reward' | 'expr' | 'steps';

/** Policy + "run until" controls. */
export function RunBar({ onRun, busy, result }: { onRun(i: RunInput): void; busy: boolean; result: string | null }) {
  const [policy, setPolicy] = useState<PolicyKind>('solution');
  const [script, setScript] = useState('');
  const [fileActions, setFileActions] = useState<string[] | null>(null);
  const [until, setUntil] = useState<UntilKind>('done');
  const [expr, setExpr] = useState('');
  const [count, setCount] = useState(10);
  const [maxSteps, setMaxSteps] = useState(1000);
  const build = (): RunInput | null => {
    const p =
      policy === 'solution'
        ? { kind: 'solution' as const }
        : policy === 'random'
          ? { kind: 'random' as const }
          : { kind: 'script' as const, actions: policy === 'file' ? (fileActions ?? []) : script.split('\n').filter((l) => l.trim()), extract: true };
    const u = until === 'expr' ? { kind: 'expr' as const, expr } : until === 'steps' ? { kind: 'steps' as const, count } : { kind: until };
    return { policy: p, until: u, maxSteps };
  };
  return (
    <div className="ep-runbar">
      <label>
        policy{' '}
        <select data-testid="policy" value={policy} onChange={(e) => setPolicy(e.target.value as PolicyKind)}>
          <option value="solution">solution()</option>
          <option value="random">random guesses</option>
          <option value="script">action script</option>
          <option value="file">file…</option>
        </select>
      </label>
      {policy === 'script' ? <textarea data-testid="script" rows={3} placeholder="one action per line" value={script} onChange={(e) => setScript(e.target.value)} /> : null}
      {policy === 'file' ? (
        <input
          type="file"
          data-testid="actions-file"
          onChange={async (e) => {
            const f = e.target.files?.[0];
            if (!f) return;
            const t = (await f.text()).trim();
            try {
              setFileActions(t.startsWith('[') ? (JSON.parse(t) as string[]) : t.split('\n').filter((l) => l.trim() && !l.startsWith('#')));
            } catch {
              setFileActions(null);
            }
          }}
        />
      ) : null}
      <label>
        until{' '}
        <select data-testid="until" value={until} onChange={(e) => setUntil(e.target.value as UntilKind)}>
          <option value="done">done</option>
          <option value="reward">reward &gt; 0</option>
          <option value="expr">state expression</option>
          <option value="steps">N steps</option>
        </select>
      </label>
      {until === 'expr' ? <input data-testid="until-expr" placeholder="e.g. turn >= 3" value={expr} onChange={(e) => setExpr(e.target.value)} /> : null}
      {until === 'steps' ? <input type="number" min={1} value={count} onChange={(e) => setCount(Number(e.target.value))} style={{ width: 70 }} /> : null}
      <label>
        max <input type="number" min={1} value={maxSteps} onChange={(e) => setMaxSteps(Number(e.target.value))} style={{ width: 70 }} />
      </label>
      <button
        disabled={busy}
        data-testid="run"
        onClick={() => {
          const i = build();
          if (i) onRun(i);
        }}
      >
        Run
      </button>
      {result ? <span className="muted" data-testid="run-result">stopped: {result}</span> : null}
    </div>
  );
}

interface TurnLike {
  turn: number;
  raw: string;
  action: string | null;
  kind: string;
  usage: { completion_tokens?: number } | null;
  latencyMs: number;
  error: string | null;
}

/** The model's turns of an episode (meta.agent): raw text, extracted action, tokens, latency. */
export function ModelTurns({ meta }: { meta: Record<string, unknown> }) {
  const turns = ((meta.agent as { turns?: TurnLike[] } | undefined)?.turns ?? []).slice(-6);
  if (!turns.length) return null;
  return (
    <div className="ep-col ep-model-turns" data-testid="model-turns">
      {turns.map((t) => (
        <div key={t.turn} className="ep-llm-turn">
          <div className="ep-kv muted">
            model turn {t.turn} · {t.kind} · {t.usage?.completion_tokens ?? '?'} tokens · {Math.round(t.latencyMs)} ms
          </div>
          {t.error ? <div className="ep-error">{t.error}</div> : <pre className="ep-msg">{t.raw}</pre>}
          {t.action !== null ? (
            <div>
              action <code>{t.action}</code>
            </div>
          ) : null}
        </div>
      ))}
    </div>
  );
}
