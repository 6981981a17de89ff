import { useCallback, useEffect, useMemo, useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import type { CompareRow, RunView } from '../../../../core/api/calls/runs';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import type { ViewProps } from '../../views/registry';
import { openEpisode, openPair } from '../episodes/store';
import { useRunPick } from './open';
import { RegretSweeps } from '../regret/RegretSweeps';
import { sameNames, VersionName } from '../../components/VersionName';
import { visibleText } from '../../components/visibleText';

type RunRow = CallOutput<'runs.list'>['rows'][number];

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '–' : (Math.round(x * 1000) / 1000).toString());
const signed = (x: number | null) => (x === null ? '–' : `${x > 0 ? '+' : ''}${fmt(x)}`);
const deltaClass = (x: number | null) => (x === null || x === 0 ? '' : x > 0 ? 'runs-delta-pos' : 'runs-delta-neg');

/**
 * Every model run, filterable by model, environment, selection and date; one run in detail, or two
 * side by side per environment (regret, win rates, deltas, a scatter of one model against the
 * other, the environments where they disagree most), each episode a click away.
 */
export function RunsView({ tab }: ViewProps<'runs'>) {
  const { a, b, pick } = useRunPick();
  useEffect(() => {
    if (tab.target.a && !useRunPick.getState().a) pick(tab.target.a, tab.target.b);
  }, [tab.target.a, tab.target.b, pick]);
  const [model, setModel] = useState('');
  const [selection, setSelection] = useState('');
  const [since, setSince] = useState('');
  const [env, setEnv] = useState('');
  const [list, setList] = useState<CallOutput<'runs.list'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    void attempt(
      'runs',
      'Model runs',
      () => backend().call('runs.list', { ...(model ? { model } : {}), ...(selection ? { selection } : {}), ...(since ? { from: since } : {}), ...(/^[0-9a-f]{64}$/.test(env) ? { envHash: env } : {}), limit: 200 }),
      { show: setError },
    ).then((r) => r && (setList(r), setError(null)));
  }, [model, selection, since, env]);
  useEffect(() => {
    load();
    return backend().on('runs.changed', load);
  }, [load]);
  // A sweep another process runs sends no runs.changed here: its run is read again as its sweep is.
  const [elsewhere, setElsewhere] = useState<ReadonlySet<string>>(new Set());
  const onSweeps = useCallback(
    (sweeps: readonly { id: string; state: string }[]) => {
      const ids = new Set(sweeps.filter((s) => s.state === 'elsewhere').map((s) => s.id));
      setElsewhere((was) => (ids.size === was.size && [...ids].every((id) => was.has(id)) ? was : ids));
      if (ids.size) load();
    },
    [load],
  );
  return (
    <div className="runs-view" data-testid="runs-view">
      <h2>Model runs</h2>
      <div className="runs-filters">
        <label>
          model{' '}
          <select value={model} onChange={(e) => setModel(e.target.value)} data-testid="runs-filter-model">
            <option value="">any</option>
            {(list?.models ?? []).map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          selection <input value={selection} onChange={(e) => setSelection(e.target.value)} placeholder="library query" style={{ width: 120 }} />
        </label>
        <label>
          environment <input value={env} onChange={(e) => setEnv(e.target.value.trim())} placeholder="version hash" style={{ width: 120 }} />
        </label>
        <label>
          since <input type="date" value={since} onChange={(e) => setSince(e.target.value)} />
        </label>
        <span className="muted">{list ? `${list.total} run${list.total === 1 ? '' : 's'} · pick A and B to compare` : 'Loading…'}</span>
      </div>
      {error ? <div className="ep-error">{error}</div> : null}
      <RegretSweeps runs={list?.rows ?? []} openRun={(id) => pick(id, null)} onSweeps={onSweeps} />
      {list ? <RunTable rows={list.rows} a={a} b={b} pick={pick} elsewhere={elsewhere} /> : null}
      {a && b ? <Compare a={a} b={b} /> : a ? <Detail id={a} /> : null}
    </div>
  );
}

/** The regret sweep a run's episodes belong to (`regret --pool`, or a sweep started above): it is cancelled and resumed as a sweep. */
const sweepOf = (r: RunRow): string | null => (typeof r.config.endpoint.sweep === 'string' ? r.config.endpoint.sweep : null);

function RunTable({ rows, a, b, pick, elsewhere }: { rows: RunRow[]; a: string | null; b: string | null; pick(a: string | null, b: string | null): void; elsewhere: ReadonlySet<string> }) {
  const [busy, setBusy] = useState<string | null>(null);
  const act = (id: string, fn: () => Promise<unknown>) => {
    setBusy(id);
    void attempt('runs', 'Run action', fn).then(() => setBusy(null));
  };
  if (!rows.length) return <p className="muted">No model run yet: Episodes → Play with a model, or `spade-workbench play`.</p>;
  return (
    <table className="runs-table" data-testid="runs-table">
      <thead>
        <tr>
          <th>A</th>
          <th>B</th>
          <th>run</th>
          <th>started</th>
          <th>model</th>
          <th>status</th>
          <th className="num">envs</th>
          <th className="num">seeds</th>
          <th title="Which estimator made the run's regrets">regret by</th>
          <th>episodes</th>
          <th>selection</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} className={r.id === a ? 'picked-a' : r.id === b ? 'picked-b' : ''} data-testid="runs-row" data-run={r.id}>
            <td>
              <input type="radio" name="run-a" aria-label={`A: ${r.id}`} checked={r.id === a} onChange={() => pick(r.id, b === r.id ? null : b)} data-testid="runs-pick-a" />
            </td>
            <td>
              <input type="radio" name="run-b" aria-label={`B: ${r.id}`} checked={r.id === b} onChange={() => pick(a === r.id ? null : a, r.id)} data-testid="runs-pick-b" />
            </td>
            <td className="mono nowrap">{r.id}</td>
            <td>{r.startedAt.slice(0, 16).replace('T', ' ')}</td>
            <td>{r.model}</td>
            <td>
              {r.status}
              {r.error ? <span className="muted" title={r.error}> ⓘ</span> : null}
            </td>
            <td className="num">{r.hashes.length}</td>
            <td className="num">{r.estimator === 'spade' ? '–' : r.seeds}</td>
            <td data-testid="runs-estimator">{ESTIMATOR_NAME[r.estimator]}</td>
            <td>
              {r.episodes.total}/{r.episodes.expected}
              {r.failedText ? <span className="runs-failed"> · {r.failedText}</span> : null}
            </td>
            <td className="muted">{r.selection ?? ''}</td>
            <td>
              {sweepOf(r) !== null && elsewhere.has(sweepOf(r)!) ? (
                // Its sweep runs in another process: resuming it here too would play its episodes twice.
                <span className="muted" data-testid="runs-elsewhere">
                  in another process
                </span>
              ) : r.live ? (
                <button disabled={busy === r.id} onClick={() => act(r.id, () => (sweepOf(r) ? backend().call('runs.sweepCancel', { sweepId: sweepOf(r)! }) : backend().call('episodes.regretCancel', { runId: r.id })))}>
                  Cancel
                </button>
              ) : r.status !== 'done' || r.episodes.failed ? (
                <button
                  disabled={busy === r.id}
                  onClick={() => act(r.id, () => (sweepOf(r) ? backend().call('runs.sweepResume', { sweepId: sweepOf(r)! }) : backend().call('runs.resume', { id: r.id })))}
                  title="Play what the run has not played, and its failed episodes again"
                >
                  {busy === r.id ? 'Resuming…' : 'Resume'}
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function useRun(id: string): RunView | null {
  const [v, setV] = useState<RunView | null>(null);
  useEffect(() => {
    let live = true;
    const load = () =>
      void attempt('runs', 'Model run', () => backend().call('runs.get', { id }), { quiet: 'warn' }).then((r) => live && setV(r ?? null));
    load();
    const off = backend().on('runs.changed', (c) => c.runId === id && load());
    return () => {
      live = false;
      off();
    };
  }, [id]);
  return v;
}

function Detail({ id }: { id: string }) {
  const v = useRun(id);
  if (!v) return null;
  const twins = sameNames(v.envs.map((e) => e.envName));
  return (
    <div className="runs-section" data-testid="runs-detail">
      <h3>
        {v.run.id} · {v.run.model} · {v.run.status}
      </h3>
      <p className="muted">
        {v.run.endpoint} ·{' '}
        <span data-testid="runs-detail-estimator">
          {v.run.estimator === 'spade' ? spadeText(v.run.config.spade) : `paired-seed regret (workbench), seeds ${v.run.seedStart}–${v.run.seedStart + v.run.seeds - 1}`}
        </span>{' '}
        · {v.run.arms.join(' + ')} · budget {v.run.maxTurns} · hint from {v.run.hintSource}
        {v.failedText ? <span className="runs-failed"> · {v.failedText} (left out of every mean)</span> : null}
      </p>
      <table className="runs-table">
        <thead>
          <tr>
            <th>environment</th>
            <th className="num">regret</th>
            <th className="num">r_hint</th>
            <th className="num">r_no_hint</th>
            <th className="num">win rate</th>
            <th className="num">difficulty</th>
            <th>seeds</th>
            <th>episodes</th>
          </tr>
        </thead>
        <tbody>
          {v.envs.map((e) => (
            <tr key={e.envHash} data-testid="runs-env-row">
              <td>
                <VersionName name={e.envName ?? e.envHash.slice(0, 12)} hash={e.envHash} twin={twins.has(e.envName ?? '')} />
              </td>
              <td className="num" data-testid="runs-env-regret">
                {e.hintFailed ? (
                  <span className="muted" title="This version has no hint, so only its unhinted arm is played: regret is not measured (SPADE's trainer would score a failed hint generation 0)">
                    no hint arm
                  </span>
                ) : (
                  <b>{e.notMeasured ? 'not measured' : fmt(e.regret)}</b>
                )}
              </td>
              <td className="num">{fmt(e.rHint)}</td>
              <td className="num">{fmt(e.rNoHint)}</td>
              <td className="num">{fmt(e.winRate)}</td>
              <td className="num">{fmt(e.difficulty)}</td>
              <td title={e.notMeasured ?? undefined} className={e.seeds.length ? undefined : 'runs-why'} data-testid="runs-env-seeds">
                {e.seeds.length ? e.seeds.join(', ') : e.notMeasured}
              </td>
              <td>
                {e.episodes.map((x) => (
                  <button
                    key={`${x.seed}:${x.hint}`}
                    className={`ep-link ${x.status === 'failed' ? 'runs-failed' : ''}`}
                    title={x.endedBy === 'refused' ? `${x.status === 'failed' ? 'failed' : `return ${fmt(x.ret)}`}: ${x.error ?? 'refused by SPADE at load'}` : x.status === 'failed' ? `failed: ${x.error ?? ''}` : `return ${fmt(x.ret)}`}
                    data-testid="runs-episode"
                    data-ended={x.endedBy}
                    disabled={x.episodeId === null}
                    onClick={() => x.episodeId !== null && openEpisode({ id: x.episodeId, envName: e.envName, className: null, seed: x.seed, hintEnabled: x.hint })}
                  >
                    {x.seed}
                    {x.hint ? 'h' : ''}
                    {x.status === 'failed' ? '✗' : ''}
                  </button>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One side's regret in the comparison: a version without a hint has no hinted arm, so no regret to compare. */
function sideRegret(m: CompareRow['a']): string {
  return !m ? '—' : m.hintFailed ? 'no hint arm' : m.notMeasured ? 'not measured' : fmt(m.regret);
}

/** One model's regret against the other's, one point per environment both measured; the diagonal is agreement. */
function Scatter({ rows, a, b }: { rows: CompareRow[]; a: string; b: string }) {
  const pts = rows.filter((r) => r.a?.regret !== null && r.a?.regret !== undefined && r.b?.regret !== null && r.b?.regret !== undefined);
  const S = 260;
  const pad = 30;
  const lo = Math.min(-1, ...pts.flatMap((r) => [r.a!.regret!, r.b!.regret!]));
  const hi = Math.max(1, ...pts.flatMap((r) => [r.a!.regret!, r.b!.regret!]));
  const at = (v: number) => pad + ((v - lo) / (hi - lo)) * (S - 2 * pad);
  return (
    <svg width={S} height={S} className="runs-scatter" data-testid="runs-scatter" data-points={pts.length} role="img" aria-label={`Regret of ${b} against ${a}, one point per environment`}>
      <rect x={pad} y={pad} width={S - 2 * pad} height={S - 2 * pad} fill="none" stroke="var(--border)" />
      <line x1={at(lo)} y1={S - at(lo)} x2={at(hi)} y2={S - at(hi)} stroke="var(--fg-muted)" strokeDasharray="4 3" />
      <line x1={at(0)} y1={pad} x2={at(0)} y2={S - pad} stroke="var(--border)" />
      <line x1={pad} y1={S - at(0)} x2={S - pad} y2={S - at(0)} stroke="var(--border)" />
      {pts.map((r) => (
        <circle key={r.envHash} cx={at(r.a!.regret!)} cy={S - at(r.b!.regret!)} r={4} fill="#2f7ed8" opacity={0.75}>
          <title>{`${visibleText(r.envName ?? '')} ${r.envHash.slice(0, 8)}: A ${fmt(r.a!.regret)} · B ${fmt(r.b!.regret)}`}</title>
        </circle>
      ))}
      <text x={S / 2} y={S - 6} textAnchor="middle">
        regret, A ({a})
      </text>
      <text x={10} y={S / 2} textAnchor="middle" transform={`rotate(-90 10 ${S / 2})`}>
        regret, B ({b})
      </text>
      <text x={pad} y={S - pad + 12}>{fmt(lo)}</text>
      <text x={S - pad} y={S - pad + 12} textAnchor="end">
        {fmt(hi)}
      </text>
    </svg>
  );
}

/** Which estimator made a run's regrets, as the tables name it. */
const ESTIMATOR_NAME = { spade: "SPADE's", paired: 'paired seeds' } as const;

/** SPADE's estimator as a run kept its settings (config.spade). */
function spadeText(sp: Record<string, unknown> | undefined): string {
  const n = (k: string, d: number) => (typeof sp?.[k] === 'number' ? (sp[k] as number) : d);
  return `SPADE's regret: ${n('hintPlays', 16)} hinted plays seeded from the game's path (PYTHONHASHSEED ${n('hashSeed', 0)}), ${n('noHintPlays', 8)} unseeded unhinted plays`;
}

function Compare({ a, b }: { a: string; b: string }) {
  const [c, setC] = useState<CallOutput<'runs.compare'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    const load = () =>
      void attempt('runs', 'Compare runs', () => backend().call('runs.compare', { a, b }), { show: setError, current: () => live }).then((r) => r && live && (setC(r), setError(null)));
    load();
    const off = backend().on('runs.changed', (x) => (x.runId === a || x.runId === b) && load());
    return () => {
      live = false;
      off();
    };
  }, [a, b]);
  const sorted = useMemo(() => (c ? [...c.rows].sort((x, y) => Math.abs(y.regretDelta ?? 0) - Math.abs(x.regretDelta ?? 0)) : []), [c]);
  const compareTwins = useMemo(() => sameNames((c?.rows ?? []).map((r) => r.envName)), [c]);
  if (error) return <div className="ep-error">{error}</div>;
  if (!c) return <p className="muted">Comparing…</p>;
  /** The same environment, seed and arm in both runs, side by side. */
  const openBoth = (hash: string, name: string | null) => {
    const epA = c.a.envs.find((e) => e.envHash === hash)?.episodes.filter((x) => x.episodeId !== null) ?? [];
    const epB = c.b.envs.find((e) => e.envHash === hash)?.episodes.filter((x) => x.episodeId !== null) ?? [];
    const pairs = epA.map((x) => [x, epB.find((y) => y.seed === x.seed && y.hint === x.hint)] as const).filter(([, y]) => y);
    // Where the two runs ended differently first: that is what a researcher opens this to see.
    const pair = pairs.find(([x, y]) => x.ret !== y!.ret || x.status !== y!.status) ?? pairs[0] ?? null;
    if (pair) openPair(pair[0].episodeId!, pair[1]!.episodeId!, 'models', `${name ?? hash.slice(0, 8)}: A vs B, seed ${pair[0].seed}`);
  };
  return (
    <div className="runs-section" data-testid="runs-compare">
      <h3>
        A {c.a.run.id} ({c.a.run.model}) vs B {c.b.run.id} ({c.b.run.model}) · {c.shared} environment{c.shared === 1 ? '' : 's'} in both ·{' '}
        <span data-testid="runs-compare-estimator">{c.a.run.estimator === 'spade' ? "SPADE's regret" : 'paired-seed regret'}</span>
      </h3>
      {c.a.failedText || c.b.failedText ? (
        <p className="runs-failed">
          {c.a.failedText ? `A: ${c.a.failedText}. ` : ''}
          {c.b.failedText ? `B: ${c.b.failedText}. ` : ''}Failed episodes count in no number.
        </p>
      ) : null}
      <div className="runs-compare">
        <table className="runs-table" data-testid="runs-compare-table">
          <thead>
            <tr>
              <th>environment</th>
              <th className="num">regret A</th>
              <th className="num">regret B</th>
              <th className="num">Δ regret</th>
              <th className="num">win A</th>
              <th className="num">win B</th>
              <th className="num">Δ win</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sorted.map((r) => (
              <tr key={r.envHash} data-testid="runs-compare-row">
                <td>
                  <VersionName name={r.envName ?? r.envHash.slice(0, 12)} hash={r.envHash} twin={compareTwins.has(r.envName ?? '')} />
                </td>
                <td className="num">{sideRegret(r.a)}</td>
                <td className="num">{sideRegret(r.b)}</td>
                <td className={`num ${deltaClass(r.regretDelta)}`} data-testid="runs-delta-regret">
                  {signed(r.regretDelta)}
                </td>
                <td className="num">{fmt(r.a?.winRate)}</td>
                <td className="num">{fmt(r.b?.winRate)}</td>
                <td className={`num ${deltaClass(r.winRateDelta)}`}>{signed(r.winRateDelta)}</td>
                <td>
                  {r.a && r.b ? (
                    <button className="ep-link" onClick={() => openBoth(r.envHash, r.envName)} data-testid="runs-open-pair">
                      episodes side by side
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div>
          <Scatter rows={c.rows} a={c.a.run.model} b={c.b.run.model} />
          <h4>Where they disagree most</h4>
          {c.disagree.length ? (
            <ol data-testid="runs-disagree">
              {c.disagree.slice(0, 5).map((r) => (
                <li key={r.envHash}>
                  <VersionName name={r.envName ?? r.envHash.slice(0, 12)} hash={r.envHash} twin={compareTwins.has(r.envName ?? '')} />: Δ regret {signed(r.regretDelta)}, Δ win {signed(r.winRateDelta)}
                </li>
              ))}
            </ol>
          ) : (
            <p className="muted">They agree on every environment both measured.</p>
          )}
        </div>
      </div>
    </div>
  );
}
