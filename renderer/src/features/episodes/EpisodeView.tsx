import { memo, useCallback, useMemo, useRef, useState } from 'react';
import type { StepView } from '../../../../core/api/calls/episodes';
import type { ViewProps } from '../../views/registry';
import { ActionBar, ModelTurns, RunBar } from './Controls';
import { LineChart } from './ReturnChart';
import { StepPanel } from './StepPanel';
import { openPair, returnNote } from './store';
import { useEpisode, type EpisodeController } from './useEpisode';
import { WorkProgress } from './WorkProgress';
import { Visible } from '../../components/Visible';

export function Timeline({ ctl, testId = 'timeline' }: { ctl: EpisodeController; testId?: string }) {
  const n = ctl.steps.length;
  return (
    <div className="ep-timeline">
      <input
        type="range"
        min={0}
        max={Math.max(0, n - 1)}
        value={ctl.idx}
        data-testid={testId}
        aria-label="Scrub to step"
        onChange={(e) => void ctl.select(Number(e.target.value))}
      />
      <span className="muted ep-pos" data-testid={`${testId}-pos`}>
        {ctl.idx} / {Math.max(0, n - 1)}
      </span>
    </div>
  );
}

const StepRow = memo(function StepRow({ s, selected, diverged, onPick }: { s: StepView; selected: boolean; diverged: boolean; onPick: (idx: number) => void }) {
  return (
    <li
      className={`${selected ? 'sel' : ''}${s.kind === 'reset' ? ' reset' : ''}${(s.reward ?? 0) > 0 ? ' win' : ''}${s.error ? ' err' : ''}${diverged ? ' diverged' : ''}`}
      onClick={() => onPick(s.idx)}
    >
      <span className="ep-i">{s.idx}</span>
      <span className="ep-a">{s.kind === 'reset' ? `reset(${s.seed ?? ''})` : s.action}</span>
      <span className="ep-r">{s.reward ?? ''}</span>
      <span className="ep-t">{s.terminated ? 'T' : s.truncated ? 't' : ''}</span>
    </li>
  );
});

/** The steps as a list; rows are memoized so a new step re-renders one row, not the whole list. */
export function StepList({ ctl }: { ctl: EpisodeController }) {
  const selectRef = useRef(ctl.select);
  selectRef.current = ctl.select;
  const onPick = useCallback((i: number) => void selectRef.current(i), []);
  const div = ctl.episode?.divergenceStep ?? null;
  return (
    <ol className="ep-steplist" data-testid="step-list">
      {ctl.steps.map((s) => (
        <StepRow key={s.idx} s={s} selected={s.idx === ctl.idx} diverged={div === s.idx} onPick={onPick} />
      ))}
    </ol>
  );
}

/** One episode: play it, scrub it, inspect each step's state. */
export function EpisodeView({ tab }: ViewProps<'episode'>) {
  const ctl = useEpisode(tab.target.episodeId, tab.target.step ?? 0);
  const [runResult, setRunResult] = useState<string | null>(null);
  const [replayMsg, setReplayMsg] = useState<string | null>(null);
  const ep = ctl.episode;
  const xs = useMemo(() => ctl.steps.map((s) => s.idx), [ctl.steps]);
  const series = useMemo(() => [{ label: 'return', values: ctl.steps.map((s) => s.cumReturn), color: '#2f7ed8' }], [ctl.steps]);
  if (!ep) return <div className="ep-view">{ctl.error ? <p className="ep-error">{ctl.error}</p> : <p className="muted">Loading…</p>}</div>;
  const replayOf = typeof ep.meta.lastReplay === 'number' ? ep.meta.lastReplay : null;
  // An environment another OpenEnv server serves (core/openenv/remoteEpisodes.ts): its URL.
  const remote = ep.runtime === 'openenv' ? String((ep.meta.openenv as { url?: unknown } | undefined)?.url ?? '') : null;
  return (
    <div className="ep-view" data-testid="episode-view" data-episode={ctl.id} data-steps={ctl.steps.length}>
      <div className="ep-header">
        <strong>
          <Visible text={ep.envName ?? ep.className} />
        </strong>
        <span className="muted">
          #{ep.id} · seed {ep.seed ?? 'None'} · hint {ep.hintEnabled ? 'on' : 'off'} · budget {ep.maxTurns} · {ep.runtime} · {ep.origin} · return{' '}
          <b data-testid="episode-return">{ep.totalReturn}</b>
          {returnNote(ep) ? (
            <span data-testid="episode-return-note" title="Each reset starts a new return; the episode's return is the last one's (as SPADE scores one reset's play)">
              {' '}
              ({returnNote(ep)})
            </span>
          ) : null}
          {ep.terminated ? ' · terminated' : ep.truncated ? ' · truncated' : ''} · {ep.live ? 'live' : 'recorded'}
          {ctl.lastStepMs !== null ? ` · last step ${ctl.lastStepMs.toFixed(1)} ms` : ''}
        </span>
        <span className="ep-header-actions">
          <button
            data-testid="replay"
            disabled={ctl.busy}
            onClick={async () => {
              setReplayMsg(null);
              const r = await ctl.replay();
              if (r) setReplayMsg(r.divergence ? `First divergence at step ${r.divergence.idx} (${r.divergence.fields.join(', ')})` : `Replayed ${r.compared} steps: no divergence`);
            }}
          >
            Replay &amp; compare
          </button>
        </span>
      </div>
      <WorkProgress work={ctl.work} onCancel={ctl.cancel} />
      {ctl.note ? (
        <div className="ep-note" data-testid="ep-note">
          {ctl.note}
        </div>
      ) : null}
      {ep.divergenceStep !== null ? (
        <div className="ep-divergence" data-testid="divergence-banner">
          First divergence at step <b data-testid="divergence-step">{ep.divergenceStep}</b>
          {Array.isArray(ep.meta.divergenceFields) ? ` (${(ep.meta.divergenceFields as string[]).join(', ')})` : ''}: the re-executed environment answers differently from the recording.
          {replayOf ? (
            <button data-testid="show-divergence" onClick={() => openPair(ep.id, replayOf, 'divergence', `Divergence #${ep.id}`, ep.divergenceStep ?? 0)}>
              Show side by side
            </button>
          ) : null}
        </div>
      ) : null}
      {replayMsg ? <div className="ep-note" data-testid="replay-result">{replayMsg}</div> : null}
      {ctl.error ? <div className="ep-error">{ctl.error}</div> : null}
      {ep.origin === 'played' && remote ? (
        <div className="ep-controls">
          <div className="ep-note" data-testid="remote-episode-note">
            Played over OpenEnv at <code>{remote}</code>: each action goes to that server as typed; observations, rewards, the end and the hint ({ep.hintEnabled ? 'on' : 'off'}) are the server&apos;s, and the state is its observation and its <code>state</code> answer. A model plays it as a run record from the OpenEnv URL page.
          </div>
          <ActionBar busy={ctl.busy} onAct={(a) => void ctl.act(a)} onReset={() => void ctl.resetAgain()} />
        </div>
      ) : ep.origin === 'played' ? (
        <div className="ep-controls">
          <ActionBar busy={ctl.busy} onAct={(a) => void ctl.act(a)} onReset={() => void ctl.resetAgain()} />
          <RunBar
            busy={ctl.busy}
            result={runResult}
            onRun={async (i) => {
              setRunResult(await ctl.run(i));
            }}
          />
          <div className="ep-runbar">
            <span className="muted">model</span>
            <button disabled={ctl.busy} data-testid="model-turn" onClick={async () => setRunResult(await ctl.modelTurn(false))}>
              Model turn
            </button>
            <button disabled={ctl.busy} data-testid="model-run" onClick={async () => setRunResult(await ctl.modelTurn(true))}>
              Model: until done
            </button>
          </div>
          <ModelTurns meta={ep.meta} />
        </div>
      ) : null}
      <Timeline ctl={ctl} />
      <div className="ep-body">
        <div className="ep-left">
          <LineChart xs={xs} series={series} marker={ctl.idx} testId="return-chart" />
          <StepList ctl={ctl} />
        </div>
        <div className="ep-right">
          <StepPanel detail={ctl.detail} />
        </div>
      </div>
    </div>
  );
}
