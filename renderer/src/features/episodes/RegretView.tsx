import { useMemo, useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import type { ViewProps } from '../../views/registry';
import { backend } from '../../store/app';
import { environments } from '../../store/environments';
import { attempt } from '../../store/report';
import { LineChart } from './ReturnChart';
import { fmt, newRunId, RegretRow, RunProgress, SeedRange, useRegretRun } from './regretParts';

type Kind = 'random' | 'solution' | 'script';

function policyOf(k: Kind, script: string) {
  return k === 'solution' ? { kind: 'solution' as const } : k === 'random' ? { kind: 'random' as const } : { kind: 'script' as const, actions: script.split('\n').filter((l) => l.trim()), extract: true };
}

/**
 * SPADE's hint-based regret for one environment: N seeds per arm, mean return with the hint minus
 * without. Scripted policies ignore the hint, so with one policy for both arms regret is ~0 by
 * construction; choose a different hinted-arm policy (e.g. solution() as a perfect hint-follower).
 */
export function RegretView({ tab }: ViewProps<'episode-regret'>) {
  const [seeds, setSeeds] = useState(10);
  const [start, setStart] = useState(0);
  const [policy, setPolicy] = useState<Kind>('random');
  const [hintPolicy, setHintPolicy] = useState<Kind | 'same'>('solution');
  const [script, setScript] = useState('');
  const [budget, setBudget] = useState<number | ''>('');
  const [r, setR] = useState<CallOutput<'episodes.regret'> | null>(null);
  const [stored, setStored] = useState<string | null>(null);
  const { runId, progress, setProgress, busy, error, setError, play } = useRegretRun();
  const [cancelling, setCancelling] = useState(false);
  const xs = useMemo(() => (r ? r.withHint.returns.map((_, i) => start + i) : []), [r, start]);
  const series = useMemo(
    () => (r ? [{ label: 'with hint', values: r.withHint.returns, color: '#2e9d4f' }, { label: 'without hint', values: r.withoutHint.returns, color: '#e4572e' }] : []),
    [r],
  );
  return (
    <div className="ep-view" data-testid="regret-view">
      <div className="ep-header">
        <strong>Hint-based regret</strong> <span className="muted">{tab.target.name} · {tab.target.hash.slice(0, 12)}</span>
      </div>
      <div className="ep-runbar">
        <SeedRange seeds={seeds} setSeeds={setSeeds} start={start} setStart={setStart} max={1000} testId="regret-seeds" />
        <label>
          policy{' '}
          <select value={policy} onChange={(e) => setPolicy(e.target.value as Kind)} data-testid="regret-policy">
            <option value="random">random guesses</option>
            <option value="solution">solution()</option>
            <option value="script">action script</option>
          </select>
        </label>
        <label>
          hinted arm{' '}
          <select value={hintPolicy} onChange={(e) => setHintPolicy(e.target.value as Kind | 'same')} data-testid="regret-hint-policy">
            <option value="same">same policy</option>
            <option value="solution">solution()</option>
            <option value="random">random guesses</option>
            <option value="script">action script</option>
          </select>
        </label>
        <label>
          budget <input type="number" min={1} value={budget} placeholder="default" onChange={(e) => setBudget(e.target.value === '' ? '' : Number(e.target.value))} style={{ width: 84 }} />
        </label>
        <button
          className="primary"
          disabled={busy}
          data-testid="regret-run"
          onClick={() => {
            const id = newRunId('regret');
            setCancelling(false);
            setProgress({ runId: id, done: 0, total: seeds * 2, etaSec: null });
            setR(null);
            setStored(null);
            void play(id, async () => {
              const result = await backend().call('episodes.regret', {
                runId: id,
                hash: tab.target.hash,
                seeds,
                seedStart: start,
                policy: policyOf(policy, script),
                ...(hintPolicy !== 'same' ? { hintPolicy: policyOf(hintPolicy, script) } : {}),
                ...(budget !== '' ? { maxTurns: budget } : {}),
              });
              setR(result);
              // A finished run is the environment's measured regret: the library shows it from now on.
              // Through the entity store, so the library and an open detail tab show the new stats at once.
              if (!result.cancelled && result.regret === null) setStored(result.hintText === null ? 'Regret not measured: this environment has no hint, so there is no hinted arm (nothing stored).' : 'Regret not measured: an arm has no return (nothing stored).');
              else if (!result.cancelled && result.regret !== null) {
                const kept = await environments.setStats(
                  { hash: tab.target.hash, regret: result.regret, rHint: result.withHint.mean, rNoHint: result.withoutHint.mean, winRate: result.withoutHint.solveRate },
                  { show: setError },
                );
                if (kept) setStored(`Stored as the environment's stats (regret ${fmt(result.regret)}).`);
              }
            });
          }}
        >
          {busy ? 'Running…' : 'Run'}
        </button>
        {busy ? (
          <button
            disabled={cancelling}
            data-testid="regret-cancel"
            onClick={() => {
              const id = runId.current;
              if (!id) return;
              setCancelling(true);
              void attempt('episodes', 'Cancel the run', () => backend().call('episodes.regretCancel', { runId: id }), { show: setError });
            }}
          >
            {cancelling ? 'Stopping…' : 'Cancel'}
          </button>
        ) : null}
      </div>
      {busy && progress ? <RunProgress progress={progress} testId="regret-progress" before={`seed ${Math.min(seeds, Math.floor(progress.done / 2) + 1)} of ${seeds} · `} /> : null}
      {policy === 'script' || hintPolicy === 'script' ? <textarea rows={3} value={script} onChange={(e) => setScript(e.target.value)} placeholder="one action per line" /> : null}
      {error ? <div className="ep-error">{error}</div> : null}
      {r ? (
        <>
          {stored ? (
            <p className="muted" data-testid="regret-stored">
              {stored}
            </p>
          ) : null}
          {r.cancelled ? (
            <p className="muted" data-testid="regret-cancelled">
              Cancelled: {r.withHint.returns.length} of the seeds asked for ran, each with and without the hint.
            </p>
          ) : null}
          <table className="ep-regret-table" data-testid="regret-table">
            <thead>
              <tr>
                <th />
                <th>mean return</th>
                <th>solve rate</th>
                <th>episodes</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <td>with hint</td>
                <td data-testid="r-hint">{fmt(r.withHint.mean)}</td>
                <td>{fmt(r.withHint.solveRate)}</td>
                <td data-testid="n-hint">{r.withHint.returns.length}</td>
              </tr>
              <tr>
                <td>without hint</td>
                <td data-testid="r-no-hint">{fmt(r.withoutHint.mean)}</td>
                <td>{fmt(r.withoutHint.solveRate)}</td>
                <td data-testid="n-no-hint">{r.withoutHint.returns.length}</td>
              </tr>
              <RegretRow value={r.regret} testId="regret-value">
                <td colSpan={2} className="muted">
                  return with hint − return without (SPADE's episode return: last reward if terminated, else 0)
                </td>
              </RegretRow>
            </tbody>
          </table>
          {r.hintText ? (
            <p className="muted">
              Hint: <i>{r.hintText}</i>
            </p>
          ) : null}
          <LineChart xs={xs} series={series} testId="regret-chart" xLabel="seed" height={180} />
        </>
      ) : null}
    </div>
  );
}
