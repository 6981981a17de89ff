import { useEffect, useState } from 'react';
import type { ViewProps } from '../../views/registry';
import { ActionBar, RunBar } from './Controls';
import { StepPanel } from './StepPanel';
import { useEpisode, type EpisodeController } from './useEpisode';
import { WorkProgress } from './WorkProgress';

function Column({ ctl, title, testId, playable }: { ctl: EpisodeController; title: string; testId: string; playable: boolean }) {
  return (
    <div className="ep-col" data-testid={testId} data-episode={ctl.id} data-steps={ctl.steps.length}>
      <div className="ep-col-head">
        <strong>{title}</strong>{' '}
        <span className="muted">
          #{ctl.id} · return {ctl.episode?.totalReturn ?? '—'} · {ctl.steps.length} steps
        </span>
      </div>
      {playable ? <ActionBar busy={ctl.busy} onAct={(a) => void ctl.act(a)} testId={`${testId}-action`} /> : null}
      <WorkProgress work={ctl.work} onCancel={ctl.cancel} testId={`${testId}-work`} />
      {ctl.note ? <div className="ep-note">{ctl.note}</div> : null}
      {ctl.error ? <div className="ep-error">{ctl.error}</div> : null}
      {ctl.idx < ctl.steps.length || ctl.steps.length === 0 ? <StepPanel detail={ctl.detail} /> : <p className="muted">This column has no step {ctl.idx}.</p>}
    </div>
  );
}

/**
 * Two episodes in synchronized columns: the same seed without and with SPADE's hint, or a
 * recording and its re-execution (divergence). One scrubber moves both.
 */
export function PairView({ tab }: ViewProps<'episode-pair'>) {
  const a = useEpisode(tab.target.a);
  const b = useEpisode(tab.target.b);
  const mode = tab.target.mode;
  const [idx, setIdx] = useState(tab.target.idx);
  const [runResult, setRunResult] = useState<string | null>(null);
  const n = Math.max(a.steps.length, b.steps.length);
  useEffect(() => {
    if (a.steps.length === 0 || b.steps.length === 0) return;
    void a.select(Math.min(idx, a.steps.length - 1));
    void b.select(Math.min(idx, b.steps.length - 1));
  }, [idx, a.steps.length, b.steps.length]);
  const titles =
    mode === 'hint'
      ? ['Without hint', 'With hint']
      : mode === 'versions'
        ? [`Before the fix (${a.episode?.envHash.slice(0, 8) ?? ''})`, `After the fix (${b.episode?.envHash.slice(0, 8) ?? ''})`]
        : mode === 'models'
          ? [`A: ${String(a.episode?.policy.model ?? '?')} (${a.episode?.hintEnabled ? 'with' : 'without'} hint)`, `B: ${String(b.episode?.policy.model ?? '?')} (${b.episode?.hintEnabled ? 'with' : 'without'} hint)`]
          : ['Recorded (imported)', 'Replayed now'];
  const playable = mode === 'hint';
  const div = a.episode?.divergenceStep ?? null;
  return (
    <div className="ep-view ep-pair" data-testid="pair-view" data-mode={mode}>
      <div className="ep-header">
        <strong>{a.episode?.envName ?? a.episode?.className ?? ''}</strong>
        <span className="muted">
          seed {a.episode?.seed ?? 'None'} ·{' '}
          {mode === 'hint'
            ? 'same environment and seed; only the first observation differs'
            : mode === 'versions'
              ? "the audit's evidence (same seed and actions) on the version before the fix and on the fixed one"
              : mode === 'models'
                ? 'the same seed played by the two runs being compared'
                : 'the recording against a fresh re-execution'}
        </span>
      </div>
      {mode === 'divergence' && div !== null ? (
        <div className="ep-divergence" data-testid="pair-divergence">
          First divergence at step <b>{div}</b>
          {Array.isArray(a.episode?.meta.divergenceFields) ? ` (${(a.episode?.meta.divergenceFields as string[]).join(', ')})` : ''}
          <button onClick={() => setIdx(div)}>Go to it</button>
        </div>
      ) : null}
      {mode === 'divergence' && div !== null && Array.isArray(a.episode?.meta.divergenceStateChanges) && (a.episode?.meta.divergenceStateChanges as unknown[]).length ? (
        <div className="ep-note" data-testid="divergence-state">
          <strong>State at step {div}</strong>{' '}
          <span className="muted">(recorded vs replayed when the recording kept state; otherwise what the replayed step changed)</span>
          <ul className="ep-changes">
            {(a.episode?.meta.divergenceStateChanges as { path: string; kind: string; before?: string; after?: string }[]).slice(0, 20).map((c) => (
              <li key={c.path} className={`ch-${c.kind}`}>
                <code>{c.path}</code> <span className="muted">{c.kind}</span> {c.before ?? ''} {c.kind === 'changed' ? '→' : ''} {c.after ?? ''}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {playable ? (
        <div className="ep-controls">
          <ActionBar
            busy={a.busy || b.busy}
            label="Step both"
            testId="pair-action"
            onAct={async (x) => {
              await Promise.all([a.act(x), b.act(x)]);
              setIdx(Math.max(a.steps.length, b.steps.length));
            }}
          />
          <RunBar
            busy={a.busy || b.busy}
            result={runResult}
            onRun={async (i) => {
              const [ra, rb] = await Promise.all([a.run(i), b.run(i)]);
              setRunResult(`${ra ?? '?'} / ${rb ?? '?'}`);
            }}
          />
        </div>
      ) : null}
      <div className="ep-timeline">
        <input type="range" min={0} max={Math.max(0, n - 1)} value={Math.min(idx, Math.max(0, n - 1))} data-testid="pair-timeline" aria-label="Scrub both to step" onChange={(e) => setIdx(Number(e.target.value))} />
        <span className="muted ep-pos">
          {idx} / {Math.max(0, n - 1)}
        </span>
      </div>
      <div className="ep-cols">
        <Column ctl={a} title={titles[0]!} testId="col-a" playable={playable} />
        <Column ctl={b} title={titles[1]!} testId="col-b" playable={playable} />
      </div>
    </div>
  );
}
