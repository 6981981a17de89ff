/**
 * Design-round presets (issue 44). Each SPADE preset names the recipe it follows and every value
 * is read from that recipe or from SPADE's code at 9b2b813 (file:line beside it). "quick, laptop"
 * keeps the workbench's earlier defaults for a small machine; it follows no recipe.
 *
 * Pure data: the renderer reads it too.
 */

/** `spade`: SPADE's trainer acceptance (the default); `workbench`: also reject on the advice (core/design/acceptance.ts). */
export type AcceptanceGate = 'spade' | 'workbench';
export const ACCEPTANCE_GATES = ['spade', 'workbench'] as const;

export const PRESET_IDS = ['spade-games', 'spade-tool-use', 'quick'] as const;
export type PresetId = (typeof PRESET_IDS)[number];

export interface DesignPreset {
  id: PresetId;
  label: string;
  /** The SPADE recipe it follows, or null (the workbench's own). */
  recipe: string | null;
  /** Agent turns per episode (--spade-max-turns); the reset gate loads the game at it too. */
  maxTurns: number;
  /** Agent sampling temperature (--spade-actor-temperature). */
  agentTemperature: number;
  /** Agent tokens per turn (--spade-actor-max-tokens). */
  agentMaxTokens: number;
  /** Designer sampling (--spade-env-temperature, --spade-env-max-tokens). */
  designerTemperature: number;
  designerMaxTokens: number;
  /** Attempts per game (max_attempts of collect_trajectories). */
  attempts: number;
  /** `spade`: a rejected game is re-sampled with a fresh prompt; `repair`: the reason goes back. */
  feedback: 'spade' | 'repair';
  /** SPADE_RESET_GATE in the recipe's runtime environment. */
  resetGate: boolean;
  /** --spade-use-env-validator in the recipe. */
  envValidator: boolean;
  gate: AcceptanceGate;
  /** Which regret the round's plays measure: SPADE's estimator (core/episodes/estimator.ts) or paired seeds. */
  estimator: 'spade' | 'paired';
  /** SPADE's per-arm thinking under its estimator (null: each arm as the agent's endpoint says). */
  armThinking: { hint: boolean; nohint: boolean } | null;
  /** Where each value comes from, for a person and the docs. */
  sources: Record<string, string>;
}

const COMMON_SOURCES = {
  attempts: 'spade/slime/spade_rollout.py:487 (collect_trajectories(..., max_attempts=5))',
  feedback: 'spade/slime/arguments.py:107-110 (--spade-env-repair-turns default 0: independent re-sampling)',
};

export const DESIGN_PRESETS: readonly DesignPreset[] = [
  {
    id: 'spade-games',
    label: 'SPADE paper defaults — games',
    recipe: 'cmd/games/train_spade_8b.sh',
    maxTurns: 25,
    agentTemperature: 0.6,
    agentMaxTokens: 8192,
    designerTemperature: 0.6,
    designerMaxTokens: 20000,
    attempts: 5,
    feedback: 'spade',
    resetGate: false,
    envValidator: false,
    gate: 'spade',
    estimator: 'spade',
    armThinking: { hint: false, nohint: true },
    sources: {
      armThinking: 'cmd/games/train_spade_8b.sh:140-142 (ACTOR_THINKING default 1: --spade-actor-enable-thinking, the unhinted plays only; :88 enable_thinking false elsewhere)',
      maxTurns: 'cmd/games/train_spade_8b.sh:99 (--spade-max-turns ${MAX_TURNS:-25})',
      agentTemperature: 'cmd/games/train_spade_8b.sh:95 (--spade-actor-temperature 0.6)',
      agentMaxTokens: 'cmd/games/train_spade_8b.sh:96 (--spade-actor-max-tokens ${ACTOR_MAX_TOKENS:-8192})',
      designerTemperature: 'cmd/games/train_spade_8b.sh:94 (--spade-env-temperature 0.6)',
      designerMaxTokens: 'cmd/games/train_spade_8b.sh:97 (--spade-env-max-tokens 20000)',
      resetGate: 'cmd/games/train_spade_8b.sh:237-245 (runtime env_vars: no SPADE_RESET_GATE)',
      envValidator: 'cmd/games/train_spade_8b.sh:91-118 (no --spade-use-env-validator; arguments.py default False)',
      ...COMMON_SOURCES,
    },
  },
  {
    id: 'spade-tool-use',
    label: 'SPADE paper defaults — tool use',
    recipe: 'cmd/tool_use/train_spade_8b.sh (runs cmd/tool_use/_train_spade_blend.sh)',
    maxTurns: 25,
    agentTemperature: 0.6,
    agentMaxTokens: 8192,
    designerTemperature: 0.6,
    designerMaxTokens: 20000,
    attempts: 5,
    feedback: 'spade',
    resetGate: true,
    envValidator: true,
    gate: 'spade',
    estimator: 'spade',
    armThinking: { hint: false, nohint: true },
    sources: {
      armThinking: 'cmd/tool_use/_train_spade_blend.sh:24, 209-211 (ENABLE_THINKING=1 for the 8B: --spade-actor-enable-thinking, the unhinted plays only; :161 enable_thinking false elsewhere)',
      maxTurns: 'cmd/tool_use/_train_spade_blend.sh:172 (--spade-max-turns ${MAX_TURNS:-25})',
      agentTemperature: 'cmd/tool_use/_train_spade_blend.sh:168 (--spade-actor-temperature 0.6)',
      agentMaxTokens: 'cmd/tool_use/_train_spade_blend.sh:169 (--spade-actor-max-tokens ${ACTOR_MAX_TOKENS:-8192})',
      designerTemperature: 'cmd/tool_use/_train_spade_blend.sh:167 (--spade-env-temperature 0.6)',
      designerMaxTokens: 'cmd/tool_use/_train_spade_blend.sh:23 (ENV_MAX_TOKENS ${ENV_MAX_TOKENS:-20000} for the 8B)',
      resetGate: 'cmd/tool_use/_train_spade_blend.sh:271 ("SPADE_RESET_GATE": "1")',
      envValidator: 'cmd/tool_use/_train_spade_blend.sh:185 (--spade-use-env-validator)',
      ...COMMON_SOURCES,
    },
  },
  {
    id: 'quick',
    label: 'quick, laptop',
    recipe: null,
    maxTurns: 12,
    agentTemperature: 1.0,
    agentMaxTokens: 256,
    designerTemperature: 0.6,
    designerMaxTokens: 2048,
    attempts: 3,
    feedback: 'repair',
    resetGate: false,
    envValidator: false,
    gate: 'spade',
    estimator: 'paired',
    armThinking: null,
    sources: { all: "the workbench's earlier defaults, for a small machine: no SPADE recipe" },
  },
];

export const DEFAULT_PRESET: PresetId = 'spade-games';

export function presetById(id: string): DesignPreset | null {
  return DESIGN_PRESETS.find((p) => p.id === id) ?? null;
}
