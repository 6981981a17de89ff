import { useCallback, useEffect, useMemo, useState } from 'react';
import type { CallOutput, EventPayload } from '../../../../core/api';
import { backend, useApp } from '../../store/app';
import { attempt } from '../../store/report';
import { useCall } from '../../store/useCall';
import { seconds } from '../../components/ProgressLine';
import { SweepCard, useFollowElsewhere } from '../../components/SweepCard';
import { SelectionMatches, SELECTION_PLACEHOLDER } from '../../components/SelectionMatches';
import { RunOnPicker, runOnText, type RunOnTarget } from '../../components/RunOnPicker';
import { RegretHistogram } from './RegretHistogram';
import { sameNames, VersionName } from '../../components/VersionName';
import { ModelSettings, NO_CHANGES, settingsText, withSettings, type ModelSettingsValue } from './ModelSettings';
import './regret.css';
import { modelKey, savedModels, type ModelPolicy } from './savedModels';

type Sweep = EventPayload<'runs.sweepProgress'>;
type Report = CallOutput<'runs.sweepReport'>;


/** Numbers as the Runs page writes them: three decimals at most, a dash for none. */
export const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '–' : (Math.round(x * 1000) / 1000).toString());

/** A whole number of at least `min` as typed, else null (empty, negative, fractional, not a number). */
export function wholeNumber(text: string, min: number): number | null {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) && n >= min ? n : null;
}

function ReportView({ sweepId, partial, openRun }: { sweepId: string; partial: boolean; openRun(): void }) {
  const [r, setR] = useState<Report | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void attempt('runs', 'Regret sweep report', () => backend().call('runs.sweepReport', { sweepId }), { show: setError }).then((x) => x && setR(x));
  }, [sweepId]);
  // Only measured regrets are drawn: an environment without a hinted arm has none (not a 0).
  const regrets = useMemo(() => (r ? r.envs.flatMap((e) => (e.regret === null ? [] : [e.regret])) : []), [r]);
  // Two versions with the same class name are told apart by their hash (shown beside the name).
  const names = useMemo(() => sameNames((r?.envs ?? []).map((e) => e.env)), [r]);
  if (error) return <p className="audit-error">{error}</p>;
  if (!r) return <p className="muted">Loading the report…</p>;
  const s = r.summary;
  return (
    <div className="regret-report" data-testid="regret-report">
      <p className="regret-summary" data-testid="regret-summary">
        {partial ? <b>So far: </b> : null}
        {s.envs} environment{s.envs === 1 ? '' : 's'}
        {s.measured < s.envs ? (
          <span data-testid="regret-unmeasured">
            {' '}
            ({s.measured} with regret measured{s.no_hint ? `; ${s.no_hint} without a hint: not measured` : ''})
          </span>
        ) : null}{' '}
        · mean{s.measured < s.envs ? ` over those ${s.measured}` : ''}: regret <b data-testid="regret-avg">{fmt(s.avg_regret)}</b> · R(hint) {fmt(s.avg_r_hint)} · R(no hint) {fmt(s.avg_r_no_hint)} · budget {r.budget} turns · run{' '}
        <button className="ep-link" onClick={openRun} data-testid="regret-open-run">
          {r.run_id}
        </button>{' '}
        {r.status}
        {r.failed ? <span className="runs-failed"> · {r.failed} (left out of every mean)</span> : null}
      </p>
      <div className="regret-report-body">
        <div className="regret-table-box">
          <table className="runs-table regret-table" data-testid="regret-table">
            <thead>
              <tr>
                <th>environment</th>
                <th className="num">R(hint)</th>
                <th className="num">R(no hint)</th>
                <th className="num">regret</th>
                <th className="num">win, hint</th>
                <th className="num">win, no hint</th>
                <th>returns (hint | no hint)</th>
              </tr>
            </thead>
            <tbody>
              {r.envs.map((e) => (
                <tr key={e.hash} data-testid="regret-row" data-hash={e.hash}>
                  <td title={e.hash}>
                    <VersionName name={e.env} hash={e.hash} twin={names.has(e.env)} />
                  </td>
                  <td className="num">{e.hint_failed ? 'no hint' : fmt(e.r_hint)}</td>
                  <td className="num">{fmt(e.r_no_hint)}</td>
                  <td className="num" data-testid="regret-cell" title={e.regret === null ? notMeasuredWhy(e) : undefined}>
                    {e.regret === null ? <span className="muted">not measured</span> : <b>{fmt(e.regret)}</b>}
                  </td>
                  <td className="num">{fmt(e.win_rate_hint)}</td>
                  <td className="num">{fmt(e.win_rate_no_hint)}</td>
                  <td className="muted regret-returns" title={e.not_measured ?? undefined}>
                    {e.returns_hint.map(fmt).join(' ') || '–'} | {e.returns_no_hint.map(fmt).join(' ') || '–'}
                    {e.failed ? <span className="runs-failed"> · {e.failed} failed</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="regret-chart-box">
          <div className="ep-section-title" data-testid="regret-chart-title">
            environments by regret ({regrets.length}
            {regrets.length < r.envs.length ? ` of ${r.envs.length}; ${r.envs.length - regrets.length} not measured` : ''})
          </div>
          <RegretHistogram regrets={regrets} testId="regret-chart" />
        </div>
      </div>
    </div>
  );
}

/** Why an environment of a report has no regret (as the command line says it, core/episodes/regretReport.ts). */
function notMeasuredWhy(e: Report['envs'][number]): string {
  if (e.hint_failed) return 'Not measured: no hint, so no hinted arm';
  return !e.returns_hint.length ? 'Not measured: no hinted episode returned' : 'Not measured: no unhinted episode returned';
}

function SweepItem({ s, heardAt, open, onToggle, openRun }: { s: Sweep; heardAt: number; open: boolean; onToggle(): void; openRun(id: string): void }) {
  const rate = s.episodesPerSec !== null ? `${s.episodesPerSec.toFixed(1)} episodes/s` : 'no rate yet';
  const left = s.etaSec !== null ? `about ${seconds(s.etaSec)} left` : 'estimating time left…';
  return (
    <SweepCard
      s={s}
      heardAt={heardAt}
      open={open}
      onToggle={onToggle}
      area="runs"
      noun="regret sweep"
      resume={() => backend().call('runs.sweepResume', { sweepId: s.id })}
      cancel={() => backend().call('runs.sweepCancel', { sweepId: s.id })}
      testIds={{ card: 'regret-sweep', progress: 'regret-progress', summary: 'regret-sweep-summary', resume: 'regret-resume', toggle: 'regret-toggle' }}
      what={
        <>
          <span>
            {s.policy} · {s.envs} env{s.envs === 1 ? '' : 's'} ×{' '}
            {s.estimator === 'spade' ? (
              <span data-testid="regret-sweep-estimator">SPADE&apos;s regret (16 hinted + 8 unseeded unhinted plays)</span>
            ) : (
              <span data-testid="regret-sweep-estimator">
                {s.seeds} seed{s.seeds === 1 ? '' : 's'} (from {s.seedStart}) × 2 arms, paired-seed regret
              </span>
            )}
          </span>
          {s.modelSettings && (
            <span className="muted regret-settings-line" data-testid="regret-model-settings">
              {settingsText(s.modelSettings)}
            </span>
          )}
        </>
      }
      resultsLabel={s.state === 'done' ? 'Results' : 'Results so far'}
      progressLabel="Playing episodes"
      progressDetail={`${left} · ${s.failed} failed · ${rate}`}
      summary={`${s.done} / ${s.total} episodes · ${s.failed} failed`}
      results={<ReportView key={`${s.id}-${s.done}-${s.state}`} sweepId={s.id} partial={s.state !== 'done'} openRun={() => openRun(s.runId)} />}
    />
  );
}

type PolicyChoice = 'solution' | 'random' | 'model';

/** Finished sweeps listed before "Show all". */
const SHOWN = 4;

/**
 * Regret sweeps: SPADE's hint-based regret over the Library's environments matching a query, each
 * seed played with and without the hint by solution(), seeded random guesses or a served model, on
 * this machine, a saved job host's Slurm or a Ray cluster, as `regret --pool` does. Each sweep is
 * a model run (the table below lists it).
 */
/** What each estimator is (core/episodes/estimator.ts says the same with SPADE's file and line). */
const ESTIMATOR_HELP = {
  spade: "SPADE's estimator: 16 hinted plays seeded from the game's path, 8 unhinted plays reset with no seed; a failed hinted play counts 0.0, a failed unhinted one is dropped",
  paired: 'paired seeds: the same seeds with and without the hint, a failed episode dropped from both arms',
} as const;

export function RegretSweeps({ runs, openRun, onSweeps }: { runs: CallOutput<'runs.list'>['rows']; openRun(id: string): void; /** Each time the list is read or a sweep moves (the Runs table follows their states). */ onSweeps?(sweeps: readonly Sweep[]): void }) {
  const [query, setQuery] = useState('');
  // What was typed, as typed: a negative or fractional count is refused in words at Start, never
  // silently turned into another number (a typed -3 became 1).
  const [seedsText, setSeeds] = useState('2');
  // SPADE's estimator by default (its own counts and seeds); paired seeds as the labelled option.
  const [estimator, setEstimator] = useState<'spade' | 'paired'>('spade');
  const [seedStartText, setSeedStart] = useState('0');
  const [budgetText, setBudget] = useState('');
  const defaultBudget = useApp((s) => s.settings?.maxTurns ?? null);
  const seeds = wholeNumber(seedsText, 1);
  const seedStart = wholeNumber(seedStartText, 0);
  const budget = budgetText.trim() === '' ? '' : wholeNumber(budgetText, 1);
  const [choice, setChoice] = useState<PolicyChoice>('solution');
  const [randomSeed, setRandomSeed] = useState<number | ''>(0);
  const [modelPick, setModelPick] = useState('');
  const [target, setTarget] = useState<RunOnTarget>({ kind: 'local' });
  const [settings, setSettings] = useState<ModelSettingsValue>(NO_CHANGES);
  const [sweeps, setSweeps] = useState<Sweep[]>([]);
  const [heard, setHeard] = useState<Record<string, number>>({});
  const [open, setOpen] = useState<string | null>(null);
  const [all, setAll] = useState(false);
  const { busy, error, run, setError } = useCall('runs');
  // Read again when the person turns to a model: Play with a model may have saved one since.
  const models = useMemo(() => savedModels(runs), [runs, choice]);
  const model: ModelPolicy | undefined = models.find((m) => modelKey(m) === modelPick) ?? models[0];

  const upsert = useCallback((s: Sweep) => {
    setSweeps((list) => (list.some((x) => x.id === s.id) ? list.map((x) => (x.id === s.id ? s : x)) : [s, ...list]));
    // A resumed sweep's clock starts again: elapsed is this run's.
    setHeard((h) => (s.state === 'running' && h[s.id] === undefined ? { ...h, [s.id]: Date.now() } : s.state !== 'running' && h[s.id] !== undefined ? (({ [s.id]: _, ...rest }) => rest)(h) : h));
  }, []);

  const load = useCallback((quiet = false) => {
    void attempt('runs', 'Regret sweeps', () => backend().call('runs.sweeps', { limit: 20 }), quiet ? { quiet: 'none' } : {}).then((list) => list?.forEach(upsert));
  }, [upsert]);
  const reload = useCallback(() => load(true), [load]);
  useFollowElsewhere(sweeps, reload);
  useEffect(() => onSweeps?.(sweeps), [sweeps, onSweeps]);

  useEffect(() => {
    load();
    return backend().on('runs.sweepProgress', (s) => {
      upsert(s);
      if (s.state === 'done') setOpen(s.id);
    });
  }, [upsert, load]);

  const start = () => {
    if (choice === 'model' && !model) return setError('No served model is known yet: play one in Episodes → Play with a model, and it is offered here.');
    if (estimator === 'paired' && seeds === null) return setError(`Seeds must be a whole number of at least 1 (not "${seedsText}").`);
    if (estimator === 'paired' && seedStart === null) return setError(`First seed must be a whole number of at least 0 (not "${seedStartText}").`);
    if (budget === null) return setError(`Budget must be a whole number of turns, at least 1 (not "${budgetText}"), or empty for the default.`);
    const policy = choice === 'model' ? withSettings(model!, settings) : choice === 'random' ? { kind: 'random' as const, ...(randomSeed !== '' ? { seed: randomSeed } : {}) } : { kind: 'solution' as const };
    void run('Start the regret sweep', () => backend().call('runs.sweepStart', { query: query.trim(), estimator, ...(estimator === 'paired' ? { seeds: seeds!, seedStart: seedStart! } : {}), ...(budget !== '' ? { maxTurns: budget } : {}), policy, target })).then((s) => s && upsert(s));
  };

  return (
    <section className="sweeps regret-sweeps" data-testid="regret-sweeps" aria-label="Regret sweeps">
      <h3>Regret sweep over a pool</h3>
      <form
        className="sweep-form"
        // The browser's own check of min=1 would stop the submit without a word (and a person would
        // not know why nothing started): Start checks the numbers itself and says what is wrong.
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          start();
        }}
      >
        <label>
          Environments
          <input data-testid="regret-query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder={SELECTION_PLACEHOLDER} spellCheck={false} />
          <SelectionMatches query={query} testId="regret-query-matches" />
        </label>
        <label>
          Regret
          <select value={estimator} onChange={(e) => setEstimator(e.target.value as 'spade' | 'paired')} data-testid="regret-estimator" title={ESTIMATOR_HELP[estimator]}>
            <option value="spade">SPADE&apos;s estimator</option>
            <option value="paired">paired seeds (workbench)</option>
          </select>
        </label>
        {estimator === 'paired' ? (
          <>
            <label>
              Seeds
              <input className="regret-num" type="number" min={1} step={1} value={seedsText} aria-invalid={seeds === null} onChange={(e) => setSeeds(e.target.value)} data-testid="regret-seeds" />
            </label>
            <label>
              First seed
              <input className="regret-num" type="number" min={0} step={1} value={seedStartText} aria-invalid={seedStart === null} onChange={(e) => setSeedStart(e.target.value)} data-testid="regret-seed-start" />
            </label>
          </>
        ) : (
          <span className="muted" data-testid="regret-spade-counts" title={ESTIMATOR_HELP.spade}>
            16 hinted plays seeded from each game&apos;s path, 8 unseeded unhinted plays
          </span>
        )}
        <label>
          Budget
          <input className="regret-num" type="number" min={1} step={1} value={budgetText} aria-invalid={budget === null} placeholder={defaultBudget !== null ? String(defaultBudget) : ''} title="Empty: the default from Settings" onChange={(e) => setBudget(e.target.value)} data-testid="regret-budget" />
        </label>
        <label>
          Policy
          <select value={choice} onChange={(e) => setChoice(e.target.value as PolicyChoice)} data-testid="regret-policy">
            <option value="solution">solution() (the game's own answer)</option>
            <option value="random">random guesses, \boxed{'{1–100}'}</option>
            <option value="model">a served model…</option>
          </select>
        </label>
        {choice === 'random' && (
          <label>
            Random seed
            <input className="regret-num" type="number" value={randomSeed} placeholder="per episode" onChange={(e) => setRandomSeed(e.target.value === '' ? '' : Math.floor(Number(e.target.value)))} data-testid="regret-random-seed" />
          </label>
        )}
        {choice === 'model' &&
          (models.length ? (
            <label>
              Model
              <select value={model ? modelKey(model) : ''} onChange={(e) => setModelPick(e.target.value)} data-testid="regret-model">
                {models.map((m) => (
                  <option key={modelKey(m)} value={modelKey(m)}>
                    {modelKey(m)}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <span className="muted run-on-hint" data-testid="regret-no-model">
              No served model known yet: Episodes → Play with a model saves one.
            </span>
          ))}
        <RunOnPicker label="Run on" testPrefix="regret" onChange={setTarget} />
        <button type="submit" disabled={busy !== null} data-testid="regret-start">
          {busy ? 'Starting…' : 'Start'}
        </button>
        {choice === 'model' && models.length > 0 && <ModelSettings model={model} value={settings} onChange={setSettings} local={target.kind === 'local'} />}
      </form>
      {error && (
        <p className="audit-error" role="alert" data-testid="regret-error">
          {error}
        </p>
      )}
      {sweeps.length > 0 && (
        <ul className="sweep-list">
          {/* The newest few, and every one still running or left to resume: the runs below stay in sight. */}
          {sweeps
            .filter((s, i) => all || i < SHOWN || s.state !== 'done')
            .map((s) => (
              <SweepItem key={s.id} s={s} heardAt={heard[s.id] ?? Date.now()} open={open === s.id} onToggle={() => setOpen((o) => (o === s.id ? null : s.id))} openRun={openRun} />
            ))}
        </ul>
      )}
      {sweeps.length > SHOWN && (
        <button className="audit-link regret-more" onClick={() => setAll((a) => !a)}>
          {all ? 'Show the newest sweeps only' : `Show all ${sweeps.length} sweeps`}
        </button>
      )}
    </section>
  );
}
