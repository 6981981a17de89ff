import type { DesignAcceptance, DesignRound } from '../../../../core/api/calls/design';
import { DESIGN_PRESETS, presetById, type AcceptanceGate, type DesignPreset, type PresetId } from '../../../../core/api/designPresets';

/**
 * How a design round decides (issue 44), in words: SPADE mode (SPADE's trainer acceptance, the
 * steps the preset's recipe turns on) or the labelled workbench gate; the random-guess test and the
 * workbench's checks are advice beside the verdict.
 */
export function modeText(gate: AcceptanceGate, preset: DesignPreset | null): string {
  const steps = ['validate_game', ...(preset?.resetGate ? ['the reset gate (from rollout 1)'] : []), ...(preset?.envValidator ? ['the LLM environment validator'] : [])];
  const follows = preset?.recipe ? `, following ${preset.recipe}` : '';
  return gate === 'spade'
    ? `SPADE mode: a game is kept as SPADE's trainer keeps it — ${steps.join(', then ')}${follows}. The random-guess test (legacy load, max_turns 1000) and the workbench's checks are advice.`
    : `Workbench gate (stricter than SPADE): ${steps.join(', ')}${follows}, and also no failing random-guess test or workbench check.`;
}

/** The form's preset and gate pickers, with what they mean. */
export function PresetPicker({ preset, gate, onPreset, onGate }: { preset: PresetId; gate: AcceptanceGate; onPreset(p: DesignPreset): void; onGate(g: AcceptanceGate): void }) {
  const p = presetById(preset);
  return (
    <fieldset className="design-mode" data-testid="design-mode">
      <legend>Acceptance</legend>
      <label title="Every value of a SPADE preset comes from the recipe it names">
        preset{' '}
        <select value={preset} onChange={(e) => onPreset(presetById(e.target.value)!)} data-testid="design-preset">
          {DESIGN_PRESETS.map((x) => (
            <option key={x.id} value={x.id}>
              {x.label}
            </option>
          ))}
        </select>
      </label>
      <label title="SPADE mode keeps what SPADE's trainer keeps; the workbench gate also refuses on the advice">
        gate{' '}
        <select value={gate} onChange={(e) => onGate(e.target.value as AcceptanceGate)} data-testid="design-gate">
          <option value="spade">SPADE mode</option>
          <option value="workbench">workbench gate (stricter)</option>
        </select>
      </label>
      <div className="muted design-mode-text" data-testid="design-mode-text">
        {modeText(gate, p)}
        {p?.envValidator ? ' Where no LLM validator is available, each verdict says "LLM validator not run".' : ''}
        {p ? ` ${p.recipe ? 'Recipe values' : 'Values'}: ${p.maxTurns} turns, agent temperature ${p.agentTemperature}, ${p.agentMaxTokens} agent tokens, ${p.attempts} attempts, ${p.feedback === 'spade' ? 're-sampling without feedback' : 'the reason fed back'}.` : ''}
      </div>
    </fieldset>
  );
}

/** A round's mode as its configuration recorded it (rounds from before issue 44 used the workbench gate). */
export function RoundMode({ round }: { round: DesignRound }) {
  const acc = round.config.acceptance as { gate?: AcceptanceGate } | undefined;
  const preset = presetById(String((round.config.extra as { preset?: string } | undefined)?.preset ?? ''));
  const gate: AcceptanceGate = acc?.gate ?? 'workbench';
  return (
    <div className={`design-round-mode design-round-mode-${gate}`} data-testid="design-round-mode">
      <b>{gate === 'spade' ? 'SPADE mode' : 'Workbench gate'}</b>
      {preset ? <> · {preset.label}</> : acc ? null : <> · recorded before SPADE mode</>}
    </div>
  );
}

const STEP_NAMES: Record<string, string> = { validate_game: 'validate_game', reset_gate: 'reset gate', env_validator: 'LLM validator' };

/** An attempt's verdict: SPADE's steps, its reason and kind, and the advice beside it. */
export function VerdictPanel({ v }: { v: DesignAcceptance }) {
  return (
    <div className="design-verdict-panel" data-testid="design-verdict">
      <div className="design-verdict-main">
        <h5>
          Verdict <span className="muted">({v.gate === 'spade' ? 'SPADE mode' : 'workbench gate'})</span>
        </h5>
        <div className={v.accepted ? 'design-ok' : 'design-bad'} data-testid="design-verdict-line">
          {v.accepted ? 'Accepted' : `Rejected (${v.kind})`}
          {v.reason ? `: ${v.reason}` : ''}
        </div>
        {v.incomplete ? (
          <div className="design-verdict-warn" data-testid="design-verdict-incomplete">
            {v.incomplete}
          </div>
        ) : null}
        <ul data-testid="design-verdict-steps">
          {v.steps.map((s) => (
            <li key={s.id} className={`design-step-${s.status}`} title={s.message}>
              <span className="mono">{STEP_NAMES[s.id] ?? s.id}</span> {s.status === 'not-run' ? 'not run' : s.status}
              {s.status !== 'pass' ? <span className="muted"> — {s.message}</span> : null}
            </li>
          ))}
        </ul>
      </div>
      <div className="design-advice" data-testid="design-advice">
        <h5>
          Advice <span className="muted">({v.gate === 'spade' ? 'not deciding' : 'the workbench gate refuses on a failure'})</span>
        </h5>
        {v.advice.length ? (
          <ul>
            {v.advice.map((a) => (
              <li key={a.id} className={`design-verdict-${a.status}`} title={a.message}>
                <span className="mono">{a.id === 'too-easy' ? 'random-guess (legacy load)' : a.id}</span> {a.status}
                {a.message ? <div className="muted">{a.message}</div> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No finding.</p>
        )}
      </div>
    </div>
  );
}
