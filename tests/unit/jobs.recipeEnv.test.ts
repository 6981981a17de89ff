import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSpec } from '../../core/jobs/launch';
import { loadRecipes, type Recipe } from '../../core/jobs/recipes';

/**
 * Every SPADE recipe against the variables its script reads at SPADE's pinned commit
 * (tests/fixtures/spade-script-env.json, written by scripts/extract-spade-env.mjs from the mirror).
 */
interface ScriptEnv {
  reads: string[];
  modelReads?: string[];
  values?: Record<string, string[]>;
  forwardsArgs: boolean;
}
const fixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'spade-script-env.json'), 'utf8')) as {
  commit: string;
  scripts: Record<string, ScriptEnv>;
};

/**
 * Names a recipe may set that its script does not read itself: read by the programs it starts.
 * Kept short and each with its reason; anything else a recipe lists must be read by the script.
 */
const READ_BY_WHAT_IT_STARTS: Record<string, string> = {
  HF_TOKEN: 'huggingface_hub in the trainer (model and dataset downloads), inherited through the Ray head the script starts',
  PYTHONUNBUFFERED: 'Python in the trainer: log lines reach the job log as they are printed',
};

/** What is wrong between a recipe and its script's variables; empty when they match. */
function mismatches(recipe: Recipe, script: ScriptEnv): string[] {
  const out: string[] = [];
  const reads = new Set(script.reads);
  const listed = new Set([...recipe.requiredEnv, ...recipe.optionalEnv, ...Object.keys(recipe.env), ...recipe.secretEnv]);
  for (const k of listed) if (!reads.has(k) && !(k in READ_BY_WHAT_IT_STARTS)) out.push(`lists ${k}, which ${recipe.spadeScript} never reads`);
  for (const k of reads) if (!listed.has(k)) out.push(`omits ${k}, which ${recipe.spadeScript} reads`);
  for (const k of script.modelReads ?? []) if (listed.has(k)) out.push(`lists ${k}, a model-architecture constant the checkpoint fixes`);
  const values = script.values ?? {};
  for (const [k, v] of Object.entries(values)) {
    if (JSON.stringify([...(recipe.envValues[k] ?? [])].sort()) !== JSON.stringify(v)) out.push(`${k} allows ${JSON.stringify(recipe.envValues[k] ?? null)}, the script ${JSON.stringify(v)}`);
  }
  for (const k of Object.keys(recipe.envValues)) if (!(k in values)) out.push(`constrains ${k}, which ${recipe.spadeScript} does not`);
  if (recipe.acceptsArgs !== script.forwardsArgs) out.push(`acceptsArgs ${recipe.acceptsArgs}, but the script ${script.forwardsArgs ? 'reads' : 'never reads'} its arguments`);
  return out;
}

const recipes = loadRecipes();
const spade = recipes.filter((r) => r.spadeScript);

describe('SPADE recipes list exactly the variables their scripts read at the pinned commit', () => {
  it('the fixture is of the pinned commit, and every recipe that runs a SPADE script names it', () => {
    expect(fixture.commit).toMatch(/^9b2b813/);
    expect(spade.map((r) => r.id).sort()).toEqual(['spade-games-30b', 'spade-games-4b', 'spade-games-8b', 'spade-tool-use-30b', 'spade-tool-use-4b', 'spade-tool-use-8b']);
    for (const r of recipes) {
      const runsCmd = r.command.some((a) => /^cmd\/.*\.sh$/.test(a));
      expect(runsCmd, r.id).toBe(r.spadeScript !== undefined);
      if (r.spadeScript) expect(r.command, r.id).toContain(r.spadeScript);
    }
  });

  it.each(spade.map((r) => [r.id, r] as const))('%s', (_id, recipe) => {
    const script = fixture.scripts[recipe.spadeScript!];
    expect(script, `${recipe.spadeScript} in the fixture`).toBeDefined();
    expect(mismatches(recipe, script!)).toEqual([]);
  });

  it('the issue-42 knobs: 4B and 30B games no longer list NUM_ROLLOUT, KL_COEF, ACTOR_THINKING; 30B lists the paper runs\' knobs', () => {
    const byId = (id: string): Recipe => spade.find((r) => r.id === id)!;
    for (const id of ['spade-games-4b', 'spade-games-30b']) for (const k of ['NUM_ROLLOUT', 'KL_COEF', 'ACTOR_THINKING']) expect(byId(id).optionalEnv).not.toContain(k);
    for (const k of ['SPADE_SKILLS', 'SKILLS_PER_REGEN', 'PROPOSER_DELAY', 'PLATEAU_LO', 'PLATEAU_HI', 'PLATEAU_RAMP', 'PLATEAU_WEIGHT', 'REGRET_WEIGHT', 'MAX_CONTEXT_LENGTH', 'ACTOR_MAX_TOKENS', 'EVAL_INTERVAL', 'NO_PROPOSER_TRAIN']) {
      expect(byId('spade-games-30b').optionalEnv).toContain(k);
    }
    expect(byId('spade-games-4b').envValues).toEqual({});
    expect(byId('spade-games-8b').envValues).toEqual({ REWARD_VARIANT: ['blend', 'regret_var'] });
    expect(byId('spade-games-30b').envValues).toEqual({ REWARD_VARIANT: ['blend', 'learning_potential', 'solve_rate'] });
  });

  it('fails when a recipe lists a variable its script does not read, omits one it reads, or allows other values', () => {
    const r4 = spade.find((r) => r.id === 'spade-games-4b')!;
    const s4 = fixture.scripts[r4.spadeScript!]!;
    expect(mismatches({ ...r4, optionalEnv: [...r4.optionalEnv, 'NUM_ROLLOUT'] }, s4)).toEqual(['lists NUM_ROLLOUT, which cmd/games/train_spade_4b.sh never reads']);
    expect(mismatches({ ...r4, env: { ...r4.env, KL_COEF: '0.01' } }, s4)).toEqual(['lists KL_COEF, which cmd/games/train_spade_4b.sh never reads']);
    expect(mismatches({ ...r4, secretEnv: [...r4.secretEnv, 'OPENAI_API_KEY'] }, s4)).toEqual(['lists OPENAI_API_KEY, which cmd/games/train_spade_4b.sh never reads']);
    expect(mismatches({ ...r4, optionalEnv: r4.optionalEnv.filter((k) => k !== 'PLATEAU_LO') }, s4)).toEqual(['omits PLATEAU_LO, which cmd/games/train_spade_4b.sh reads']);
    expect(mismatches({ ...r4, envValues: { REWARD_VARIANT: ['blend'] } }, s4)).toEqual(['constrains REWARD_VARIANT, which cmd/games/train_spade_4b.sh does not']);
    expect(mismatches({ ...r4, acceptsArgs: true }, s4)).toEqual(['acceptsArgs true, but the script never reads its arguments']);
    const r30 = spade.find((r) => r.id === 'spade-games-30b')!;
    expect(mismatches({ ...r30, envValues: { REWARD_VARIANT: ['blend', 'regret_var'] } }, fixture.scripts[r30.spadeScript!]!)).toHaveLength(1);
    expect(mismatches({ ...r30, optionalEnv: [...r30.optionalEnv, 'MOE_LAYER_FREQ'] }, fixture.scripts[r30.spadeScript!]!)).toEqual([
      'lists MOE_LAYER_FREQ, which cmd/games/train_spade_30b.sh never reads',
      'lists MOE_LAYER_FREQ, a model-architecture constant the checkpoint fixes',
    ]);
  });

  it('launching refuses arguments to a script that never reads them, and a value the script refuses', () => {
    const base = { name: 'x', backend: 'local' as const, workdir: '/tmp/x', secretEnv: ['WANDB_API_KEY'], poolDir: null, env: { WANDB_ENTITY: 'e', CORPUS_FILE: '' } };
    expect(() => buildSpec({ ...base, recipe: 'spade-games-4b', extraArgs: ['--num-rollout', '10'] }, recipes)).toThrow(/never reads its arguments: set its variables instead of passing --num-rollout 10/);
    expect(() => buildSpec({ ...base, recipe: 'spade-games-8b', env: { ...base.env, REWARD_VARIANT: 'solve_rate' } }, recipes)).toThrow(/REWARD_VARIANT must be one of blend, regret_var/);
    expect(buildSpec({ ...base, recipe: 'spade-games-30b', env: { ...base.env, REWARD_VARIANT: 'solve_rate' } }, recipes).env['REWARD_VARIANT']).toBe('solve_rate');
    expect(buildSpec({ ...base, recipe: 'spade-games-4b' }, recipes).command).toEqual(['bash', 'cmd/games/train_spade_4b.sh']);
    // A recipe that runs the workbench's own script still takes arguments.
    expect(buildSpec({ name: 'e', backend: 'local', recipe: 'example-run', workdir: '/tmp/e', poolDir: null, extraArgs: ['--rollouts', '2'] }, recipes, () => '/usr/bin/python3').command.slice(-2)).toEqual(['--rollouts', '2']);
  });
});
