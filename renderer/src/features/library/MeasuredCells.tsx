import { useEffect, useState } from 'react';
import type { EnvSummary } from '../../../../core/api';
import { SPADE_BLEND_DEFAULTS as P } from '../../../../core/api/spadeBlend';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { fmt, useLibrary } from './store';

/** The Blend cell's tooltip: SPADE's designer reward of the measurement shown, part by part. */
function blendText(m: EnvSummary['measured']): string {
  const b = m?.blend ?? null;
  if (!m) return 'not measured by a model run: no blend';
  if (!b) return `regret not measured by ${m.model}: no blend (never a 0)`;
  return [
    `SPADE's designer blend ${fmt(b.blend)} of what ${m.model} measured (run ${m.runId}) = plateau term ${fmt(b.plateau_term)} + regret term ${fmt(b.regret_term)}`,
    `${b.params.plateauWeight} × plateau(mean unhinted reward ${fmt(b.mean_reward)}; ${P.plateauLo}–${P.plateauHi}, ramp ${P.plateauRamp}) = ${b.params.plateauWeight} × ${fmt(b.plateau)}`,
    `${b.params.regretWeight} × clip(regret ${fmt(b.regret)} / ${b.params.regretScale}, 0, 1) = ${b.params.regretWeight} × ${fmt(b.regret_norm)}`,
    b.masked ? 'masked: below 0, no designer gradient' : 'not masked (only below 0)',
    b.estimator ? `regret by the ${b.estimator} estimator` : 'the stored regret does not name its estimator',
  ].join('\n');
}

/**
 * What a model run measured (the chosen model's, else the newest) beside what a training run
 * recorded (imported): two sources, never mixed in one number.
 */
export function MeasuredCells({ env }: { env: EnvSummary }) {
  const m = env.measured ?? null;
  const b = m?.blend ?? null;
  const measuredTitle = m ? `${m.estimator === 'spade' ? "SPADE's regret" : 'paired-seed regret (workbench)'}, measured by ${m.model} (run ${m.runId}) over ${m.seeds} seed${m.seeds === 1 ? '' : 's'}${m.failed ? `, ${m.failed} failed episode${m.failed === 1 ? '' : 's'} left out` : ''}: win rate ${fmt(m.winRate)}, difficulty ${fmt(m.difficulty)}${m.frontier ? ' · frontier' : ''}` : 'not measured by a model run';
  const recordedTitle = env.regret === null && env.winRate === null ? 'no regret recorded by a training run' : `recorded by a training run (imported): regret ${fmt(env.regret)}, win rate ${fmt(env.winRate)}`;
  return (
    <>
      {/* SPADE's estimator is what "regret" means; a paired-seed regret is marked on its row (library.css: a "p" after it). */}
      <span className="lib-num" data-testid="library-regret" data-estimator={m?.estimator ?? undefined} title={`${measuredTitle}\n${recordedTitle}`}>
        {fmt(m?.regret ?? null)}
      </span>
      <span className={`lib-num lib-win ${m?.frontier ? 'lib-frontier' : ''}`} data-testid="library-winrate" title={measuredTitle}>
        {fmt(m?.winRate ?? null)}
      </span>
      <span className={`lib-num lib-blend ${b?.masked ? 'lib-masked' : ''} ${b ? '' : 'muted'}`} data-testid="library-blend" data-blend={b?.blend ?? ''} title={blendText(m)}>
        {b ? fmt(b.blend) : '–'}
      </span>
      <span className="lib-model muted" data-testid="library-model" title={measuredTitle}>
        {m?.model ?? '–'}
      </span>
      <span className="lib-num lib-recorded muted" data-testid="library-recorded" title={recordedTitle}>
        {fmt(env.regret)}
      </span>
    </>
  );
}

/** Whose measurements the columns show, and SPADE's frontier band (win rate 0.15-0.85) for that model. */
export function MeasuredFacet() {
  const filters = useLibrary((s) => s.filters);
  const setFilters = useLibrary((s) => s.setFilters);
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    const load = () =>
      // Only the model filter's choices: none known, none offered.
      void attempt('library', 'Models', () => backend().call('runs.list', { limit: 1 }), { quiet: 'warn' }).then((r) => r && live && setModels(r.models));
    load();
    const off = backend().on('runs.changed', load);
    return () => {
      live = false;
      off();
    };
  }, []);
  if (!models.length) return null;
  return (
    <div className="lib-ranges" data-testid="facet-measured">
      <label>
        model{' '}
        <select value={filters.measuredBy ?? ''} onChange={(e) => setFilters({ measuredBy: e.target.value || undefined })} data-testid="facet-model">
          <option value="">newest of any</option>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </label>
      <button
        className={`chip ${filters.frontier ? 'on' : ''}`}
        data-testid="facet-frontier"
        title="SPADE's frontier: measured win rate between 0.15 and 0.85 (what its designer samples from memory)"
        onClick={() => setFilters({ frontier: filters.frontier ? undefined : true })}
      >
        frontier 0.15–0.85
      </button>
    </div>
  );
}
