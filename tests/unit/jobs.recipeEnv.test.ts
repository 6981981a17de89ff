import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { buildSpec } from '../../core/jobs/launch';
import { commandLine, renderSbatch } from '../../core/jobs/script';
import type { JobRecord } from '../../core/jobs/types';
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
/** The same, for one family of scripts only (a name read by one trainer is no licence for the others). */
const READ_BY_WHAT_IT_STARTS_IN: Record<string, Record<string, string>> = {
  'cmd/tinker/': {
    TINKER_API_KEY: 'the Tinker SDK: tinker.ServiceClient (train_spade_tinker.py:319) reads it from the environment (cmd/tinker/README.md "export TINKER_API_KEY")',
    WANDB_API_KEY: 'tinker-cookbook 2c87e8f tinker_cookbook/utils/ml_log.py:421 (setup_logging logs to W&B only when it is set)',
    OPENAI_API_KEY: 'train_spade_tinker.py:216, the fixed-model evaluation key named by FIXED_EVAL_API_KEY_ENV (OPENAI_API_KEY by default)',
  },
};
const startedReads = (script: string): Record<string, string> => {
  const out = { ...READ_BY_WHAT_IT_STARTS };
  for (const [prefix, names] of Object.entries(READ_BY_WHAT_IT_STARTS_IN)) if (script.startsWith(prefix)) Object.assign(out, names);
  return out;
};

/** What is wrong between a recipe and its script's variables; empty when they match. */
function mismatches(recipe: Recipe, script: ScriptEnv): string[] {
  const out: string[] = [];
  const reads = new Set(script.reads);
  const listed = new Set([...recipe.requiredEnv, ...recipe.optionalEnv, ...Object.keys(recipe.env), ...recipe.secretEnv]);
  const started = startedReads(recipe.spadeScript ?? '');
  for (const k of listed) if (!reads.has(k) && !(k in started)) out.push(`lists ${k}, which ${recipe.spadeScript} never reads`);
  for (const k of reads) if (!listed.has(k)) out.push(`omits ${k}, which ${recipe.spadeScript} reads`);
  for (const k of script.modelReads ?? []) if (listed.has(k)) out.push(`lists ${k}, a model-architecture constant the checkpoint fixes`);
  const values = script.values ?? {};
  for (const [k, v] of Object.entries(values)) {
    if (JSON.stringify([...(recipe.envValues[k] ?? [])].sort()) !== JSON.stringify(v)) out.push(`${k} allows ${JSON.stringify(recipe.envValues[k] ?? null)}, the script ${JSON.stringify(v)}`);
  }
  for (const k of Object.keys(recipe.envValues)) if (!(k in values)) out.push(`constrains ${k}, which ${recipe.spadeScript} does not`);
  for (const k of Object.keys(recipe.fixedEnv)) if (!(k in recipe.env)) out.push(`fixes ${k} without setting it`);
  if (recipe.acceptsArgs !== script.forwardsArgs) out.push(`acceptsArgs ${recipe.acceptsArgs}, but the script ${script.forwardsArgs ? 'reads' : 'never reads'} its arguments`);
  return out;
}

const recipes = loadRecipes();
const spade = recipes.filter((r) => r.spadeScript);

describe('SPADE recipes list exactly the variables their scripts read at the pinned commit', () => {
  it('the fixture is of the pinned commit, and every recipe that runs a SPADE script names it', () => {
    expect(fixture.commit).toMatch(/^9b2b813/);
    // Every launcher SPADE has at the commit (its cmd/ scripts less the `_` helpers they exec and the
    // model-shape files they source) is run by a recipe, and no recipe runs a script the commit lacks.
    const launchers = Object.keys(fixture.scripts).filter((p) => !p.startsWith('cmd/models/') && !/\/_[^/]*$/.test(p));
    expect(launchers.length).toBe(24);
    expect(launchers.filter((p) => !spade.some((r) => r.spadeScript === p))).toEqual([]);
    for (const r of spade) expect(Object.keys(fixture.scripts), r.id).toContain(r.spadeScript);
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

describe("SPADE's Tinker launchers, dry runs and baselines", () => {
  const byId = (id: string): Recipe => {
    const r = recipes.find((x) => x.id === id);
    if (!r) throw new Error(`no recipe ${id}`);
    return r;
  };
  const tinker = spade.filter((r) => r.spadeScript!.startsWith('cmd/tinker/'));
  const base = { name: 't', backend: 'local' as const, workdir: '/tmp/spade', poolDir: null, env: { WANDB_ENTITY: 'e' }, secretEnv: ['TINKER_API_KEY'] };

  it('each Tinker launcher: a local or SSH job, TINKER_API_KEY a required secret, its metrics.jsonl charted, the log-folder prompt answered "resume"', () => {
    expect(tinker.map((r) => r.spadeScript).sort()).toEqual(Object.keys(fixture.scripts).filter((p) => p.startsWith('cmd/tinker/')).sort());
    expect(tinker).toHaveLength(5);
    for (const r of tinker) {
      expect(r.backends, r.id).toEqual(['local', 'ssh']);
      expect(r.secretEnv, r.id).toContain('TINKER_API_KEY');
      expect(r.requiredEnv, r.id).toContain('TINKER_API_KEY');
      expect(Object.keys(r.env), r.id).not.toContain('TINKER_API_KEY');
      expect(r.env['OUTPUT_DIR'], r.id).toBe('{{JOB_DIR}}/run');
      expect(r.outputs.metricsFile, r.id).toBe('{{JOB_DIR}}/run/metrics.jsonl');
      expect(r.stdin, r.id).toEqual(['resume']);
      expect(buildSpec({ ...base, recipe: r.id }, recipes).stdin, r.id).toEqual(['resume']);
      // Without the key as a secret the launch is refused before anything runs.
      expect(() => buildSpec({ ...base, recipe: r.id, secretEnv: [] }, recipes), r.id).toThrow(/needs TINKER_API_KEY/);
    }
  });

  it('the launchers that pass aime_2026_path (read AIME_2026_PATH) get it fixed to a path that is never a file; a launch cannot undo it', () => {
    const reading = tinker.filter((r) => fixture.scripts[r.spadeScript!]!.reads.includes('AIME_2026_PATH')).map((r) => r.id).sort();
    expect(reading).toEqual(['spade-tinker-gpt-oss-20b', 'spade-tinker-qwen3-30b-instruct', 'spade-tinker-qwen3-4b-instruct']);
    for (const r of tinker) {
      if (reading.includes(r.id)) {
        expect(r.env['AIME_2026_PATH'], r.id).toBe('{{JOB_DIR}}/no-aime-2026');
        expect(r.fixedEnv['AIME_2026_PATH'], r.id).toMatch(/train_spade_tinker\.py:127-128/);
        expect(() => buildSpec({ ...base, recipe: r.id, env: { ...base.env, AIME_2026_PATH: '/data/aime-2026.jsonl' } }, recipes), r.id).toThrow(
          new RegExp(`Recipe ${r.id} sets AIME_2026_PATH itself and it cannot be changed: .*SpadeConfig`),
        );
        // Nor through the secret store, where the value would be unseen.
        expect(() => buildSpec({ ...base, recipe: r.id, secretEnv: ['TINKER_API_KEY', 'AIME_2026_PATH'] }, recipes), r.id).toThrow(/AIME_2026_PATH is given both as a plain variable and as a secret/);
        // Giving the value it already has is no change.
        expect(buildSpec({ ...base, recipe: r.id, env: { ...base.env, AIME_2026_PATH: '{{JOB_DIR}}/no-aime-2026' } }, recipes).env['AIME_2026_PATH']).toBe('{{JOB_DIR}}/no-aime-2026');
      } else expect(r.fixedEnv, r.id).toEqual({});
    }
  });

  it('a dry run for every launcher that reads PREPARE_ONLY: PREPARE_ONLY=1 fixed, no Ray head to follow, no GPU asked of Slurm', () => {
    const preparing = [...new Set(spade.map((r) => r.spadeScript!))].filter((p) => fixture.scripts[p]!.reads.includes('PREPARE_ONLY')).sort();
    expect(preparing).toEqual([
      'cmd/ablations/train_fixed_gpt55_30b.sh',
      'cmd/games/train_fixed_gpt55_30b.sh',
      'cmd/games/train_fixed_gpt55_4b.sh',
      'cmd/games/train_fixed_gpt55_8b.sh',
      'cmd/tool_use/train_spade_30b.sh',
      'cmd/tool_use/train_spade_8b.sh',
    ]);
    const dry = spade.filter((r) => 'PREPARE_ONLY' in r.fixedEnv);
    // The ablation's script only runs cmd/games/train_fixed_gpt55_30b.sh, whose dry run is the one offered.
    expect(dry.map((r) => r.spadeScript).sort()).toEqual(preparing.filter((p) => !p.startsWith('cmd/ablations/')));
    for (const r of dry) {
      expect(r.id, r.spadeScript).toMatch(/-dry-run$/);
      expect(r.env['PREPARE_ONLY']).toBe('1');
      expect(r.ray, r.id).toBeUndefined();
      expect(r.slurm?.gpus, r.id).toBe(0);
      expect(() => buildSpec({ ...base, recipe: r.id, secretEnv: [], env: { ...base.env, PREPARE_ONLY: '0' } }, recipes), r.id).toThrow(/sets PREPARE_ONLY itself/);
    }
    // Training recipes of those scripts offer PREPARE_ONLY as an ordinary variable.
    expect(byId('spade-fixed-gpt55-4b').optionalEnv).toContain('PREPARE_ONLY');
  });

  it('ablations and fixed-environment baselines: RLVE_ENV_SET values kept and enforced; the fixed-pool ablation takes no arguments (its "$@" goes to a script that reads none)', () => {
    expect(spade.filter((r) => r.spadeScript!.startsWith('cmd/ablations/'))).toHaveLength(7);
    expect(byId('spade-ablation-fixed-gpt55-30b').acceptsArgs).toBe(false);
    for (const size of ['4b', '8b', '30b']) {
      const r = byId(`spade-fixed-rlve-${size}`);
      expect(r.envValues).toEqual({ RLVE_ENV_SET: ['all', 'official16'] });
      expect(() => buildSpec({ ...base, recipe: r.id, secretEnv: ['WANDB_API_KEY'], env: { ...base.env, RLVE_ENV_SET: 'official15' } }, recipes)).toThrow(/RLVE_ENV_SET must be one of all, official16/);
    }
    // A checked variable handed over as a secret would escape the check: refused.
    expect(() => buildSpec({ ...base, recipe: 'spade-games-8b', secretEnv: ['WANDB_API_KEY', 'REWARD_VARIANT'], env: { ...base.env, CORPUS_FILE: '' } }, recipes)).toThrow(/REWARD_VARIANT cannot be a secret: its script accepts only blend, regret_var/);
    expect(() => buildSpec({ ...base, recipe: 'spade-fixed-gpt55-8b-dry-run', secretEnv: ['PREPARE_ONLY'] }, recipes)).toThrow(/PREPARE_ONLY is given both as a plain variable and as a secret/);
    // The learning-potential and solve-rate ablations fix REWARD_VARIANT themselves: no longer offered.
    expect(byId('spade-ablation-solve-rate-30b').optionalEnv).not.toContain('REWARD_VARIANT');
    expect(byId('spade-ablation-no-corpus-30b').envValues).toEqual({ REWARD_VARIANT: ['blend', 'learning_potential', 'solve_rate'] });
  });

  it('a Tinker recipe listing what its launcher never reads, or a secret only another family reads, fails the check', () => {
    const r = byId('spade-tinker-qwen3-8b');
    const s = fixture.scripts[r.spadeScript!]!;
    expect(mismatches(r, s)).toEqual([]);
    expect(mismatches({ ...r, optionalEnv: [...r.optionalEnv, 'AIME_2026_PATH'] }, s)).toEqual(['lists AIME_2026_PATH, which cmd/tinker/qwen3_8b/train_spade_tinker.sh never reads']);
    expect(mismatches({ ...r, secretEnv: [...r.secretEnv, 'OPENROUTER_API_KEY'] }, s)).toEqual(['lists OPENROUTER_API_KEY, which cmd/tinker/qwen3_8b/train_spade_tinker.sh never reads']);
    // TINKER_API_KEY is no licence outside cmd/tinker/.
    const g = byId('spade-games-8b');
    expect(mismatches({ ...g, secretEnv: [...g.secretEnv, 'TINKER_API_KEY'] }, fixture.scripts[g.spadeScript!]!)).toEqual(['lists TINKER_API_KEY, which cmd/games/train_spade_8b.sh never reads']);
    expect(mismatches({ ...r, fixedEnv: { BATCH_SIZE: 'why' } }, s)).toEqual(['fixes BATCH_SIZE without setting it']);
  });
});

describe('answer lines on the command\'s input', () => {
  it('reach the command through a pipe, quoted, with its exit status kept; a line break or a Slurm job is refused', () => {
    const line = commandLine(['sh', '-c', 'read a; read b; printf "%s|%s" "$a" "$b"; exit 3'], ['resume', "it's $HOME"]);
    let out = '';
    let code = 0;
    try {
      execFileSync('sh', ['-c', line], { encoding: 'utf8' });
    } catch (e) {
      const err = e as { status: number; stdout: string };
      code = err.status;
      out = err.stdout;
    }
    expect(out).toBe("resume|it's $HOME");
    expect(code).toBe(3);
    expect(commandLine(['echo', 'x'], undefined)).toBe('echo x');
    expect(() => commandLine(['echo'], ['a\nb'])).toThrow(/line break/);
    const spec = buildSpec({ name: 't', backend: 'local', recipe: 'spade-tinker-qwen3-8b', workdir: '/tmp/s', poolDir: null, env: { WANDB_ENTITY: 'e' }, secretEnv: ['TINKER_API_KEY'] }, recipes);
    const job = { id: 'j1', name: 't', spec: { ...spec, backend: 'slurm' } } as unknown as JobRecord;
    expect(() => renderSbatch('{{COMMAND}}', job, { workdir: '/w', jobDir: '/w/j', script: '/w/j/job.sh', log: '/w/j/job.log', exitFile: '/w/j/exit_code' })).toThrow(/standard input, which the Slurm backend does not give it/);
  });
});
