import { useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import type { EndpointInput } from '../../../../core/api/calls/models';
import { LOCAL_SAMPLING } from '../../../../core/api/spadeSampling';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { ErrorText } from '../../components/ErrorText';
import { fmt, newRunId, RunProgress, SeedRange, useRegretRun } from '../episodes/regretParts';
import { openRuns } from '../runs/open';
import { saveEndpoint, savedEndpoint } from '../../store/savedEndpoint';

type Run = CallOutput<'openenv.remote.play'>;
type HintMode = 'on' | 'off' | 'both' | null;

function armsNote(mode: HintMode | undefined): string {
  if (mode === undefined) return 'The hinted arm plays only where the server takes a hint (the workbench’s serve-env; Open here says which).';
  if (mode === null) return 'This server has no hint (only the workbench’s serve-env says it takes one): it is played unhinted only.';
  if (mode === 'off') return 'This server serves unhinted episodes only.';
  if (mode === 'on') return 'This server serves hinted episodes only.';
  return 'This server serves both arms: with its hint, and without.';
}

/**
 * A model plays the environment at the page's URL as a model run record (openenv.remote.play):
 * seeds per arm, the endpoint as the app's other model plays take it (or the embedded model),
 * progress and Cancel as the regret runs have them, the run then in Runs.
 */
export function RemotePlayPanel({ url, hintMode, env: game }: { url: string; hintMode: HintMode | undefined; env?: string | undefined }) {
  const [ep, setEp] = useState<EndpointInput>(savedEndpoint);
  const [seeds, setSeeds] = useState(2);
  const [start, setStart] = useState(0);
  const [hintArm, setHintArm] = useState(true);
  const [plainArm, setPlainArm] = useState(true);
  const [budget, setBudget] = useState<number | ''>('');
  const [run, setRun] = useState<Run | null>(null);
  const { runId, progress, setProgress, busy, error, setError, play } = useRegretRun();
  const set = (p: Partial<EndpointInput>) => setEp((e) => ({ ...e, ...p }));

  // What the server can play: no hinted arm without a hint, no unhinted one on a hint-only server.
  const canHint = hintMode === undefined || hintMode === 'on' || hintMode === 'both';
  const canPlain = hintMode !== 'on';
  const arms = [...(hintArm && canHint ? (['hint'] as const) : []), ...(plainArm && canPlain ? (['nohint'] as const) : [])];

  const go = () => {
    if (!url) return setError('Give the server’s URL above first');
    if (!ep.model) return setError('Give the model’s name (or choose the local model)');
    if (!arms.length) return setError('Choose an arm to play');
    const id = newRunId('openenv');
    saveEndpoint(ep);
    setRun(null);
    return play(id, async () => {
      setProgress({ runId: id, done: 0, total: seeds * arms.length, etaSec: null });
      setRun(await backend().call('openenv.remote.play', { runId: id, url, endpoint: ep, seeds, seedStart: start, arms: [...arms], ...(budget !== '' ? { maxTurns: budget } : {}), ...(game ? { env: game } : {}) }));
    });
  };

  const env = run?.envs[0];
  return (
    <section className="remote-play" data-testid="remote-play">
      <h3>Play with a model, as a run record</h3>
      <p className="muted">
        Each seed of each arm is one episode on a fresh session at the URL; the runs are kept in Runs, each environment named after the served game and its server. {armsNote(hintMode)}
      </p>
      <div className="openenv-form">
        <label className="remote-play-endpoint">
          endpoint <input value={ep.baseUrl} onChange={(e) => set({ baseUrl: e.target.value })} placeholder="http://127.0.0.1:30000/v1" data-testid="remote-play-endpoint" />
        </label>
        <label>
          model <input value={ep.model} onChange={(e) => set({ model: e.target.value })} style={{ width: 170 }} data-testid="remote-play-model" />
        </label>
        <button
          title="The embedded model: SmolLM2-135M-Instruct (GGUF) on this machine's CPU, no server needed"
          onClick={() => set({ baseUrl: 'local', model: ep.baseUrl === 'local' && ep.model ? ep.model : 'SmolLM2-135M-Instruct', via: null, ...(ep.baseUrl === 'local' ? {} : { maxTokens: LOCAL_SAMPLING.maxTokens, concurrency: LOCAL_SAMPLING.concurrency }) })}
          data-testid="remote-play-local"
        >
          local model
        </button>
        <label>
          max tokens <input type="number" min={1} value={ep.maxTokens ?? 8192} onChange={(e) => set({ maxTokens: Number(e.target.value) })} style={{ width: 70 }} />
        </label>
      </div>
      <div className="openenv-form">
        <SeedRange seeds={seeds} setSeeds={setSeeds} start={start} setStart={setStart} testId="remote-play-seeds" />
        <label title={canHint ? 'Episodes with the server’s hint' : 'This server has no hinted episodes'}>
          <input type="checkbox" checked={hintArm && canHint} disabled={!canHint} onChange={(e) => setHintArm(e.target.checked)} data-testid="remote-play-hint" /> hint
        </label>
        <label title={canPlain ? 'Episodes without a hint' : 'This server serves hinted episodes only'}>
          <input type="checkbox" checked={plainArm && canPlain} disabled={!canPlain} onChange={(e) => setPlainArm(e.target.checked)} data-testid="remote-play-nohint" /> no hint
        </label>
        <label>
          max turns <input type="number" min={1} value={budget} placeholder="default" onChange={(e) => setBudget(e.target.value === '' ? '' : Number(e.target.value))} style={{ width: 76 }} title="Empty: the Settings' budget" data-testid="remote-play-turns" />
        </label>
        <button className="primary" disabled={busy || !url} onClick={() => void go()} data-testid="remote-play-go">
          {busy ? 'Playing…' : 'Play'}
        </button>
        {busy ? (
          <button
            data-testid="remote-play-cancel"
            onClick={() => {
              const id = runId.current;
              if (id) void attempt('openenv', 'Cancel the run', () => backend().call('episodes.regretCancel', { runId: id }), { show: setError });
            }}
          >
            Cancel
          </button>
        ) : null}
      </div>
      {busy && progress ? <RunProgress progress={progress} testId="remote-play-progress" /> : null}
      <ErrorText error={error} />
      {run ? (
        <div data-testid="remote-play-result">
          <div className="openenv-url">
            <span>
              Run <code>{run.runId}</code> · {run.model} · <span data-testid="remote-play-status">{run.status}</span>
            </span>
            {env ? (
              <span className="muted">
                R(hint) {fmt(env.rHint)} · R(no hint) {fmt(env.rNoHint)} · regret {env.regret === null ? 'not measured' : fmt(env.regret)}
              </span>
            ) : null}
            <button onClick={() => openRuns(run.runId)} data-testid="remote-play-open-runs">
              Open in Runs
            </button>
          </div>
          {run.cancelled ? <p className="muted">Cancelled: what finished is kept; Resume in Runs plays the rest under the same run.</p> : null}
          {run.failedText ? <p className="error">{run.failedText}: a failed episode has no return and counts in no mean.</p> : null}
          <div className="remote-table-wrap">
            <table className="runs-table" data-testid="remote-play-rows">
              <thead>
                <tr>
                  <th>arm</th>
                  <th className="num">seed</th>
                  <th className="num">return</th>
                  <th>ended</th>
                  <th>error</th>
                </tr>
              </thead>
              <tbody>
                {run.episodes.map((e) => (
                  <tr key={`${e.hint ? 'h' : 'n'}${e.seed}`} data-testid="remote-play-row">
                    <td>{e.hint ? 'hint' : 'no hint'}</td>
                    <td className="num">{e.seed}</td>
                    <td className="num">{e.failed ? '–' : fmt(e.return)}</td>
                    <td>{e.endedBy}</td>
                    <td className="error">{e.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ) : null}
    </section>
  );
}
