import { memo } from 'react';
import type { StepDetail, StepView } from '../../../../core/api/calls/episodes';
import { StateTree } from './StateTree';
import { Visible } from '../../components/Visible';

function Flags({ s }: { s: StepView }) {
  return (
    <span className="ep-flags">
      <span className={`ep-flag${s.terminated ? ' on' : ''}`}>terminated</span>
      <span className={`ep-flag${s.truncated ? ' on' : ''}`}>truncated</span>
    </span>
  );
}

function resetName(r: NonNullable<StepDetail['comparedReset']>): string {
  return r.sameEpisode ? `the reset at step ${r.idx}` : `a fresh instance's reset (episode #${r.episodeId})`;
}

/** One step in full: action, observation with its diff to the previous one, reward, flags, info, state. */
export const StepPanel = memo(function StepPanel({ detail, compact = false }: { detail: StepDetail | null; compact?: boolean }) {
  if (!detail) return <p className="muted">Select a step.</p>;
  const s = detail.step;
  // What changed since the previous step, and what a reset failed to restore (the leak): both marked in the tree.
  const changed = [...new Set([...detail.changes.map((c) => c.path), ...(detail.changesFromSameSeedReset ?? []).map((c) => c.path)])];
  const hinted = s.agentObservation !== null && s.agentObservation !== s.observation;
  return (
    <div className="ep-step" data-testid="step-panel" data-idx={s.idx}>
      <div className="ep-step-head">
        <strong>Step {s.idx}</strong> <span className="muted">{s.kind === 'reset' ? `reset(seed=${s.seed ?? 'None'})` : 'step'}</span>
        {s.kind === 'step' ? (
          <>
            <span className="ep-kv">
              reward <b data-testid="step-reward">{s.reward ?? '—'}</b>
            </span>
            <span className="ep-kv">
              return <b>{s.cumReturn}</b>
            </span>
            <Flags s={s} />
          </>
        ) : null}
      </div>
      {s.kind === 'step' ? (
        <div className="ep-action">
          <span className="muted">action</span> <code data-testid="step-action"><Visible text={s.action} /></code>
          {s.rawAction ? <details><summary className="muted">agent text</summary><pre><Visible text={s.rawAction} /></pre></details> : null}
        </div>
      ) : null}
      {s.error ? (
        <pre className="ep-error" data-testid="step-error">
          {s.error.type}: {s.error.message}
          {s.error.traceback ? `\n${s.error.traceback}` : ''}
        </pre>
      ) : null}
      <div className="ep-section-title">{hinted ? 'Observation the agent saw (with hint)' : 'Observation'}</div>
      <pre className="ep-obs" data-testid="step-observation">
        {hinted && s.observation !== null && s.agentObservation!.startsWith(s.observation) ? (
          <>
            <Visible text={s.observation} />
            <mark className="ep-hint-text" data-testid="injected-hint"><Visible text={s.agentObservation!.slice(s.observation.length)} /></mark>
          </>
        ) : hinted ? (
          <Visible text={s.agentObservation} />
        ) : s.observation === null ? (
          '(none)'
        ) : (
          <Visible text={s.observation} />
        )}
      </pre>
      {!compact && detail.observationDiff.some((o) => o.op !== '=') ? (
        <>
          <div className="ep-section-title">Change from the previous observation</div>
          <pre className="ep-diff" data-testid="obs-diff">
            {detail.observationDiff.map((o, i) => (
              <div key={i} className={o.op === '+' ? 'add' : o.op === '-' ? 'del' : 'same'}>
                {o.op === '=' ? '  ' : `${o.op} `}
                <Visible text={o.text} />
              </div>
            ))}
          </pre>
        </>
      ) : null}
      {Object.keys(s.info).length ? (
        <>
          <div className="ep-section-title">info</div>
          <pre className="ep-info">{JSON.stringify(s.info)}</pre>
        </>
      ) : null}
      {detail.changesFromSameSeedReset && detail.changesFromSameSeedReset.length && detail.comparedReset ? (
        <div className="ep-leak" data-testid="leak-changes">
          <strong>This reset did not restore the state of {resetName(detail.comparedReset)}.</strong> Fields that differ (same seed{' '}
          {detail.comparedReset.seed ?? 'none'}):
          <ul>
            {detail.changesFromSameSeedReset.map((c) => (
              <li key={c.path}>
                <code>{c.path}</code> {c.before ?? ''} → {c.after ?? ''}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="ep-section-title">State {changed.length ? <span className="muted">({changed.length} changed)</span> : null}</div>
      {detail.changes.length ? (
        <ul className="ep-changes" data-testid="state-changes">
          {detail.changes.slice(0, 30).map((c) => (
            <li key={c.path} className={`ch-${c.kind}`}>
              <code>{c.path}</code> <span className="muted">{c.kind}</span> {c.before ?? ''} {c.kind === 'changed' ? '→' : ''} {c.after ?? ''}
            </li>
          ))}
        </ul>
      ) : null}
      <StateTree state={detail.state} changed={changed} />
    </div>
  );
});
