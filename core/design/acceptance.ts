/**
 * Whether a designed program is kept (issue 44). The default, SPADE mode, is SPADE's trainer
 * acceptance at 9b2b813, in its order (spade/core/orchestrator.py:1136-1176, the same in
 * corpus_orchestrator.py:145-182):
 *   1. validate_game (spade/core/utils/game_files.py:11-23): a legacy load with budget 1000 (its
 *      own validation: reset(seed=42), three probes, reset(seed=123)), the wrapper's reset(),
 *      steps "1", "2", "test", close(); 60 s for all (orchestrator.py:86). The audit's
 *      `spade.admission` check plays it (native/judge_spade.py check_admission).
 *   2. the reset gate, only where the recipe sets SPADE_RESET_GATE and from rollout 1
 *      (orchestrator.py:1142-1154; criteria_throw_at_reset, synthetic_game_env.py:487):
 *      `spade.reset-gate`.
 *   3. the LLM environment validator where the recipe passes --spade-use-env-validator
 *      (orchestrator.py:1157-1176, env_validator.py), an injected step (EnvValidatorStep): the
 *      workbench's implementation lives elsewhere (core/design/envValidator.ts).
 * The random-guess test (SPADE's offline generate_and_validate_games.py only, loaded as it loads
 * it: legacy, max_turns forced to 1000) and the workbench's own checks are advice beside the
 * verdict. The `workbench` gate, a labelled option, rejects on them too (the old behaviour).
 * A program that tried to leave the sandbox is refused in either mode (issue 46): it is not a
 * quality verdict but the one thing the workbench must not store, play and export.
 */
import type { AuditOptions, CheckResult, EnvAudit } from '../audit/types';
import { errorMessage } from '../api/errorMessage';
import type { AcceptanceGate } from '../api/designPresets';

export type { AcceptanceGate };

/** What a round's acceptance follows: the gate and what the chosen preset's recipe turns on. */
export interface AcceptancePolicy {
  gate: AcceptanceGate;
  /** SPADE_RESET_GATE as the recipe sets it (applied from rollout 1, as SPADE applies it). */
  resetGate: boolean;
  /** --spade-use-env-validator as the recipe sets it. */
  envValidator: boolean;
  /** The recipe's --spade-max-turns: the reset gate loads the game at it (config.max_turns). */
  maxTurns: number;
}

/** What SPADE's EnvironmentValidator.validate_async answers: (is_valid, reasoning). */
export interface EnvValidatorVerdict {
  valid: boolean;
  reasoning: string;
}

/**
 * The LLM environment validator, injected. It must answer as validate_async does (which accepts on
 * an empty answer, a missing \boxed verdict or its own error, env_validator.py:166-185); anything
 * it throws rejects the attempt, as SPADE's generation loop treats any exception (orchestrator.py:1195).
 */
export type EnvValidatorStep = (code: string, ctx: { skill: string; toolUse: boolean; signal?: AbortSignal }) => Promise<EnvValidatorVerdict>;

/** SPADE's 120 s bound on one validator call (orchestrator.py:1158-1160). */
export const ENV_VALIDATOR_TIMEOUT_MS = 120_000;

/**
 * Why a program was refused: SPADE's reject_stage where SPADE saves one (save_rejected_game:
 * `criteria_throw_at_reset`, `env_validator`), `validate_game` for SPADE's first step, and the
 * workbench's own kinds.
 */
export type RejectKind = 'validate_game' | 'criteria_throw_at_reset' | 'env_validator' | 'env_validator_error' | 'sandbox' | 'too-easy' | 'workbench';

export type StepStatus = 'pass' | 'fail' | 'off' | 'not-run';
export interface AcceptanceStep {
  id: 'validate_game' | 'reset_gate' | 'env_validator';
  status: StepStatus;
  message: string;
}

export interface AcceptanceVerdict {
  gate: AcceptanceGate;
  accepted: boolean;
  /** Said beside an accepted verdict when a step the recipe asks for did not run ("LLM validator not run"). */
  incomplete: string | null;
  kind: RejectKind | null;
  /** SPADE's words for its rejections (the text its generation loop raises), the checks' for the rest. */
  reason: string | null;
  /** The validator's whole answer, kept as SPADE keeps it (spade_games_rejected/*.reason.txt). */
  reasoning: string | null;
  steps: AcceptanceStep[];
  /** The random-guess test (legacy load) and the workbench's failing or warning checks: shown, never deciding in SPADE mode. */
  advice: Pick<CheckResult, 'id' | 'status' | 'message'>[];
}

export const NOT_RUN_VALIDATOR = 'LLM validator not run: the preset asks for it and no validator is available';

/** The audit options an attempt needs for this policy. `rollout`: SPADE's rollout id, the round's seq. */
export function acceptanceAuditOptions(policy: AcceptancePolicy, rollout: number): Pick<AuditOptions, 'admissionAlways' | 'guessLoad' | 'resetGate'> {
  return {
    admissionAlways: true,
    guessLoad: 'legacy',
    ...(policy.resetGate && rollout > 0 ? { resetGate: { maxTurns: policy.maxTurns } } : {}),
  };
}

const pick = (c: CheckResult) => ({ id: c.id, status: c.status, message: c.message });

/** validate_game's verdict from the audit: `spade.admission`, or why it did not run. */
function validateGameStep(audit: EnvAudit): AcceptanceStep {
  const adm = audit.checks.find((c) => c.id === 'spade.admission');
  if (adm && adm.status === 'pass') return { id: 'validate_game', status: 'pass', message: adm.message };
  if (adm && adm.status === 'fail') return { id: 'validate_game', status: 'fail', message: adm.message };
  // Not run: the respect-mode load before it hung, or the interpreter died. SPADE would not keep a
  // game its own 60 s bound cuts off; what stopped it is said, never a pass.
  const first = audit.checks.find((c) => c.id.startsWith('spade.') && c.status === 'fail');
  return { id: 'validate_game', status: 'fail', message: `Game validation failed: validate_game did not run (${first ? `${first.id}: ${first.message}` : 'the audit did not reach it'})` };
}

/**
 * The verdict on one audited program. `validator` is asked only when SPADE's earlier steps pass,
 * the policy asks for it and the gate has not already refused the program.
 */
export async function decideAcceptance(
  audit: EnvAudit,
  code: string,
  policy: AcceptancePolicy,
  ctx: { rollout: number; skill: string; validator?: EnvValidatorStep | null; signal?: AbortSignal },
): Promise<AcceptanceVerdict> {
  const advice = audit.checks.filter((c) => !c.id.startsWith('spade.') && c.id !== 'sandbox' && (c.status === 'fail' || c.status === 'warn' || c.id === 'too-easy')).map(pick);
  const out: AcceptanceVerdict = { gate: policy.gate, accepted: false, incomplete: null, kind: null, reason: null, reasoning: null, steps: [], advice };
  const reject = (kind: RejectKind, reason: string) => {
    out.kind = kind;
    out.reason = reason;
    return out;
  };

  const vg = validateGameStep(audit);
  out.steps.push(vg);
  const gateOn = policy.resetGate && ctx.rollout > 0;
  const gateCheck = audit.checks.find((c) => c.id === 'spade.reset-gate');
  if (vg.status === 'fail') {
    out.steps.push({ id: 'reset_gate', status: gateOn ? 'not-run' : 'off', message: gateOn ? 'Not reached' : policy.resetGate ? 'Off at rollout 0 (SPADE applies it from rollout 1)' : 'Off in this recipe' });
    out.steps.push({ id: 'env_validator', status: policy.envValidator ? 'not-run' : 'off', message: policy.envValidator ? 'Not reached' : 'Off in this recipe' });
    return reject('validate_game', vg.message);
  }
  if (gateOn) {
    if (!gateCheck || gateCheck.status === 'skip') {
      out.steps.push({ id: 'reset_gate', status: 'fail', message: `The reset gate did not run${gateCheck ? `: ${gateCheck.message}` : ''}` });
      out.steps.push({ id: 'env_validator', status: policy.envValidator ? 'not-run' : 'off', message: policy.envValidator ? 'Not reached' : 'Off in this recipe' });
      return reject('criteria_throw_at_reset', `The reset gate did not run${gateCheck ? `: ${gateCheck.message}` : ''}`);
    }
    out.steps.push({ id: 'reset_gate', status: gateCheck.status === 'fail' ? 'fail' : 'pass', message: gateCheck.message });
    if (gateCheck.status === 'fail') {
      out.steps.push({ id: 'env_validator', status: policy.envValidator ? 'not-run' : 'off', message: policy.envValidator ? 'Not reached' : 'Off in this recipe' });
      return reject('criteria_throw_at_reset', gateCheck.message);
    }
  } else {
    out.steps.push({ id: 'reset_gate', status: 'off', message: policy.resetGate ? 'Off at rollout 0 (SPADE applies it from rollout 1)' : 'Off in this recipe' });
  }

  // Before the validator: a program that tried to leave the sandbox, and the workbench gate's refusals.
  const sandbox = audit.checks.find((c) => c.id === 'sandbox' && c.status === 'fail');
  const pending = (why: string): AcceptanceStep => ({ id: 'env_validator', status: policy.envValidator ? 'not-run' : 'off', message: policy.envValidator ? why : 'Off in this recipe' });
  if (sandbox) {
    out.steps.push(pending('Not asked: the program tried to leave the sandbox'));
    return reject('sandbox', sandbox.message);
  }
  if (policy.gate === 'workbench') {
    const easy = audit.checks.find((c) => c.id === 'too-easy' && c.status === 'fail');
    if (easy) {
      out.steps.push(pending('Not asked: the workbench gate refused the program'));
      return reject('too-easy', easy.message);
    }
    const failed = audit.checks.filter((c) => !c.id.startsWith('spade.') && c.status === 'fail');
    if (failed.length) {
      out.steps.push(pending('Not asked: the workbench gate refused the program'));
      return reject('workbench', failed.map((c) => `${c.id}: ${c.message}`).join('; '));
    }
  }

  if (!policy.envValidator) {
    out.steps.push({ id: 'env_validator', status: 'off', message: 'Off in this recipe' });
  } else if (!ctx.validator) {
    out.steps.push({ id: 'env_validator', status: 'not-run', message: NOT_RUN_VALIDATOR });
    out.incomplete = NOT_RUN_VALIDATOR;
  } else {
    let v: EnvValidatorVerdict;
    try {
      v = await withTimeout(ctx.validator(code, { skill: ctx.skill, toolUse: audit.toolUse, ...(ctx.signal ? { signal: ctx.signal } : {}) }), ENV_VALIDATOR_TIMEOUT_MS);
    } catch (e) {
      const why = `The environment validator failed: ${errorMessage(e)}`;
      out.steps.push({ id: 'env_validator', status: 'fail', message: why });
      // SPADE's loop drops such an attempt without saving it (orchestrator.py:1195-1199): not its reject stage.
      return reject('env_validator_error', why);
    }
    if (!v.valid) {
      out.reasoning = v.reasoning;
      // SPADE's message: the first 200 characters of the reasoning, newlines as spaces (orchestrator.py:1171-1174).
      const reason = `Environment validator rejected game: ${Array.from(v.reasoning).slice(0, 200).join('').replace(/\n/g, ' ')}`;
      out.steps.push({ id: 'env_validator', status: 'fail', message: reason });
      return reject('env_validator', reason);
    }
    out.steps.push({ id: 'env_validator', status: 'pass', message: 'The environment validator accepts the game' });
  }
  out.accepted = true;
  return out;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: ReturnType<typeof setTimeout> | undefined;
  const timer = new Promise<never>((_, rej) => {
    t = setTimeout(() => rej(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, timer]).finally(() => clearTimeout(t));
}

/** One line for a person: the verdict and, when SPADE kept it with a step missing, that step. */
export function verdictLine(v: AcceptanceVerdict): string {
  if (!v.accepted) return `rejected (${v.kind}): ${v.reason}`;
  return v.incomplete ? `accepted — ${v.incomplete}` : 'accepted';
}
