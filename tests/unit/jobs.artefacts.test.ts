import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchEvals, megatronCheckpoints, parseEvalResults, readTracker, stepInLabel, tinkerCheckpoints } from '../../core/jobs/artefactFormats';
import { continueInput, continueOffer, readsLoadDir, type ReadArtefacts } from '../../core/jobs/artefacts';
import { loadRecipes } from '../../core/jobs/recipes';
import type { JobRecord } from '../../core/jobs/types';

const FIX = join(__dirname, '..', 'fixtures');
/** results.json as eval_offline's RunResult.write wrote them (scripts/eval-offline-fixture.py). */
const results = (iter: string): string => readFileSync(join(FIX, 'eval-offline', iter, 'results.json'), 'utf8');

describe("eval_offline's results.json", () => {
  it('reads every suite of the file SPADE wrote: metrics, seconds, skipped, the error, the step its checkpoint names', () => {
    const r = parseEvalResults('/run/offline_eval/a/results.json', results('iter_0000015'));
    expect(r.ckpt).toBe('/runs/spade/Qwen3-8B_games_blend_thinking/iter_0000015_hf');
    expect(r.step).toBe(15);
    expect(r.startedAt).toBe('2026-05-02T10:00:00Z');
    expect(r.suites.map((s) => s.name)).toEqual(['aime', 'gpqa_diamond', 'livecodebench', 'gem']);
    expect(r.suites[0]!.metrics.aime2025_pass1).toBe(0.2125);
    expect(r.suites[0]!.elapsedSec).toBe(812.4);
    // A suite that returned {"skipped": True}: run_offline_eval pops it into SuiteResult.skipped.
    expect(r.suites[2]).toMatchObject({ name: 'livecodebench', skipped: true, metrics: {}, error: null });
    expect(r.suites[3]!.metrics['gem_eval/category_rg_math/win_rate']).toBeCloseTo(0.26);
  });

  it("reads json.dumps' bare NaN as no value, and keeps the last line of a suite's traceback", () => {
    const r = parseEvalResults('x/results.json', results('iter_0000031'));
    expect(r.step).toBe(31);
    const aime = r.suites.find((s) => s.name === 'aime')!;
    expect(aime.metrics.aime2026_pass1).toBeNull();
    expect(aime.metrics.aime2025_pass1).toBe(0.2604);
    expect(r.suites.find((s) => s.name === 'livecodebench')).toMatchObject({ skipped: false, error: 'RuntimeError: LCB_ROOT is not set' });
  });

  it('refuses what is not a results.json with a clear error, and bounds what a hostile one can make it hold', () => {
    expect(() => parseEvalResults('a/results.json', 'not json')).toThrow(/a\/results.json is not eval_offline's results.json/);
    expect(() => parseEvalResults('a/results.json', '[1, 2]')).toThrow(/not a JSON object/);
    expect(() => parseEvalResults('a/results.json', '{"ckpt": "x"}')).toThrow(/no "metrics" object/);
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`m${i}`, 'x'.repeat(10_000)]));
    const r = parseEvalResults('a/results.json', JSON.stringify({ metrics: { s: many, t: { nested: { deep: [1, 2] } } }, ckpt: 'c' }));
    expect(Object.keys(r.suites[0]!.metrics)).toHaveLength(500);
    expect((r.suites[0]!.metrics.m0 as string).length).toBe(300);
    expect(r.suites[1]!.metrics.nested).toBe('{"deep":[1,2]}');
  });

  it("takes a checkpoint's step only from a whole iter_NNNNNNN name", () => {
    expect(stepInLabel('/save/iter_0000047')).toBe(47);
    expect(stepInLabel('/save/iter_0000047_hf/')).toBe(47);
    expect(stepInLabel('/save/iter_00000470')).toBeNull();
    expect(stepInLabel('/save/myiter_0000047')).toBeNull();
    expect(stepInLabel('Qwen/Qwen3-8B')).toBeNull();
  });
});

describe('checkpoints', () => {
  it("lists a Megatron save folder's iter_ folders by step, the tracker's one marked latest", () => {
    expect(readTracker('31\n')).toBe(31);
    expect(readTracker('release')).toBe('release');
    expect(readTracker('31; rm -rf /')).toBeNull();
    expect(readTracker(null)).toBeNull();
    const cps = megatronCheckpoints('/r/save', ['iter_0000015', 'latest_checkpointed_iteration.txt', 'iter_0000031', 'rollout', 'iter_15', 'iter_0000047'], 31);
    expect(cps.map((c) => [c.step, c.name, c.latest])).toEqual([
      [47, 'iter_0000047', false],
      [31, 'iter_0000031', true],
      [15, 'iter_0000015', false],
    ]);
    expect(cps[1]!.path).toBe('/r/save/iter_0000031');
  });

  it("reads Tinker's checkpoints.jsonl: each line's batch is its step, the last line with a state path is what a run resumes from", () => {
    // Lines as tinker_cookbook/checkpoint_utils.py:82-84 appends them ({"name", **loop_state, **paths}).
    const text = [
      JSON.stringify({ name: '000032', batch: 32, state_path: 'tinker://run-1/weights/000032', sampler_path: 'tinker://run-1/sampler_weights/000032' }),
      JSON.stringify({ name: '000064', batch: 64, state_path: 'tinker://run-1/weights/000064', sampler_path: 'tinker://run-1/sampler_weights/000064' }),
      JSON.stringify({ name: '000070', batch: 70, sampler_path: 'tinker://run-1/sampler_weights/000070' }),
      '{"name": 5}',
      'garbage',
      '',
    ].join('\n');
    const r = tinkerCheckpoints(text);
    expect(r.skipped).toBe(2);
    expect(r.checkpoints.map((c) => [c.step, c.latest])).toEqual([[70, false], [64, true], [32, false]]);
    const evals = matchEvals([{ ...parseEvalResults('e/results.json', results('iter_0000015')), ckpt: 'tinker://run-1/sampler_weights/000032', ckptResolved: '', step: null }], r.checkpoints);
    expect(evals[0]!.step).toBe(32);
  });
});

describe('continue this run (LOAD_DIR)', () => {
  const fixture = JSON.parse(readFileSync(join(FIX, 'spade-script-env.json'), 'utf8')) as { scripts: Record<string, { reads: string[] }> };
  const recipes = loadRecipes();

  it("is offered exactly for the recipes whose SPADE script reads LOAD_DIR at the pinned commit", () => {
    const spade = recipes.filter((r) => r.spadeScript);
    expect(spade.length).toBeGreaterThan(0);
    for (const r of spade) expect(readsLoadDir(r), r.id).toBe(fixture.scripts[r.spadeScript!]!.reads.includes('LOAD_DIR'));
    expect(readsLoadDir(recipes.find((r) => r.id === 'example-run'))).toBe(false);
  });

  const job = (over: Partial<JobRecord> = {}): JobRecord => ({
    id: 'j1', name: 'spade 8b', backend: 'slurm', host: 'login', recipe: 'spade-games-8b', externalId: '42', state: 'cancelled', detail: '', exitCode: null,
    remoteLog: null, logOffset: 0, localLogSize: 0, metricsOffset: 0, createdAt: '', startedAt: null, finishedAt: null, updatedAt: '',
    spec: {
      name: 'spade 8b', backend: 'slurm', recipe: 'spade-games-8b', command: ['bash', 'cmd/games/train_spade_8b.sh'], workdir: '~/spade',
      env: { OUTPUT_DIR: '{{JOB_DIR}}/run', WANDB_ENTITY: 'team', CORPUS_FILE: '/c.jsonl' }, secretEnv: ['WANDB_API_KEY'],
      ssh: { host: 'login', user: 'me' }, slurm: { gpus: 8, container: '/c.sif' }, ray: { address: 'http://127.0.0.1:8265', submissionId: 'spade_games_8b_1' },
      outputs: {}, ship: [], importEnvironments: true,
    },
    ...over,
  });
  const art = (saveDirs: ReadArtefacts['saveDirs']): ReadArtefacts => ({ runDir: '/h/spade/.spade_workbench/j1/run', note: null, saveDirs, checkpoints: [], evals: [], problems: [] });
  const save = '/h/spade/.spade_workbench/j1/run/Qwen3-8B_games_blend_thinking';

  it('relaunches the same recipe, machine and variables with LOAD_DIR = the save folder whose tracker is newest', () => {
    const recipe = recipes.find((r) => r.id === 'spade-games-8b');
    const a = art([{ path: '/h/other', kind: 'megatron', latest: 15, tracker: '15', checkpoints: 1 }, { path: save, kind: 'megatron', latest: 31, tracker: '31', checkpoints: 2 }]);
    expect(continueOffer(job(), recipe, a)).toEqual({ loadDir: save, step: 31 });
    const input = continueInput(job(), recipe, a);
    expect(input).toMatchObject({ name: 'spade 8b (from step 31)', backend: 'slurm', recipe: 'spade-games-8b', workdir: '~/spade', secretEnv: ['WANDB_API_KEY'], ssh: { host: 'login', user: 'me' }, slurm: { gpus: 8, container: '/c.sif' } });
    expect(input.env).toEqual({ OUTPUT_DIR: '{{JOB_DIR}}/run', WANDB_ENTITY: 'team', CORPUS_FILE: '/c.jsonl', LOAD_DIR: save });
    // The head the script submits to, never the old run's Ray job.
    expect(input.ray).toEqual({ address: 'http://127.0.0.1:8265' });
    expect(continueInput(job(), recipe, a, '/h/other').env!.LOAD_DIR).toBe('/h/other');
  });

  it('says why not: a running job, a save folder without a tracker, a script that ignores LOAD_DIR, an attached job, a folder not of this run', () => {
    const recipe = recipes.find((r) => r.id === 'spade-games-8b');
    const a = art([{ path: save, kind: 'megatron', latest: 31, tracker: '31', checkpoints: 2 }]);
    expect(() => continueInput(job({ state: 'running' }), recipe, a)).toThrow(/still running: stop it/);
    expect(continueOffer(job(), recipe, art([{ path: save, kind: 'megatron', latest: null, tracker: null, checkpoints: 2 }]))).toEqual({ why: expect.stringMatching(/no Megatron save folder with latest_checkpointed_iteration.txt/) });
    const tool4b = recipes.find((r) => r.id === 'spade-tool-use-4b');
    expect(continueOffer(job({ recipe: 'spade-tool-use-4b' }), tool4b, a)).toEqual({ why: 'cmd/tool_use/train_spade_4b.sh does not read LOAD_DIR, so it cannot continue from a checkpoint' });
    expect(continueOffer(job({ spec: { ...job().spec, attached: true } }), recipe, a)).toEqual({ why: expect.stringMatching(/did not launch this run/) });
    expect(() => continueInput(job(), recipe, a, '/etc')).toThrow(/\/etc is not a save folder of this run/);
  });
});
