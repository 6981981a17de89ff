import { defaultPoolDir, loadRecipes, resolveShip, type Recipe } from './recipes';
import { probePython } from '../runtime/native';
import { assertEnvName } from './shell';
import type { BackendKind, JobSpec, RayOptions, SlurmOptions, SshTarget } from './types';
import { DomainError } from '../errors';
import { packageRoot } from '../base/appInfo';
import { join } from 'node:path';

export interface LaunchRequest {
  name: string;
  backend: BackendKind;
  recipe?: string | undefined;
  /** Without a recipe: the argv to run. */
  command?: string[] | undefined;
  workdir?: string | undefined;
  env?: Record<string, string> | undefined;
  secretEnv?: string[] | undefined;
  ssh?: SshTarget | undefined;
  slurm?: SlurmOptions | undefined;
  ray?: RayOptions | undefined;
  /** Local folder to ship as the run's pool (an export from memory, or the seed pack by default). */
  poolDir?: string | null | undefined;
  extraArgs?: string[] | undefined;
  importEnvironments?: boolean | undefined;
  /** The library of the workbench that launches: fills a recipe's `{{DATA_DIR}}` on the local backend (the train-grpo recipe trains on it). */
  dataDir?: string | undefined;
}

/** `{{DATA_DIR}}` in a recipe's variables: this workbench's library on a local job; elsewhere, or when unknown, the variable is left out (the CLI's default library). */
function fillDataDir(env: Record<string, string>, backend: BackendKind, dataDir: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!v.includes('{{DATA_DIR}}')) out[k] = v;
    else if (backend === 'local' && dataDir) out[k] = v.replace(/\{\{DATA_DIR\}\}/g, dataDir);
  }
  return out;
}

/**
 * The interpreter a recipe's `{{PYTHON}}` names: on this machine the one the native runtime runs games
 * with (SPADE_PYTHON, else the workbench's venv, else a python3 with numpy), so a local run accepts the
 * numpy games the workbench itself runs; on any other machine its own `python3`.
 */
export function recipePython(backend: BackendKind, local: () => string | null = () => probePython()?.path ?? null): string {
  if (backend !== 'local') return 'python3';
  const path = local();
  if (!path) throw new DomainError('unavailable', 'No Python 3.8+ for a local run: set SPADE_PYTHON, or make the workbench venv (node scripts/python-venv.mjs DIR) and set SPADE_WORKBENCH_VENV');
  return path;
}

/**
 * The workbench itself, for recipes that run it (a design round): on this machine this install's
 * launcher run by this Node (Electron's binary acts as Node with ELECTRON_RUN_AS_NODE); elsewhere
 * `spade-workbench` and `node` from that machine's PATH, unless the job's variables say otherwise.
 */
export function recipeWorkbench(backend: BackendKind): { cli: string; node: string; env: Record<string, string> } {
  if (backend !== 'local') return { cli: 'spade-workbench', node: 'node', env: {} };
  return { cli: join(packageRoot(), 'bin', 'spade-workbench.mjs'), node: process.execPath, env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {} };
}

const fillWorkbench = (env: Record<string, string>, backend: BackendKind): Record<string, string> => {
  if (!Object.values(env).some((v) => v.includes('{{WORKBENCH_CLI}}') || v.includes('{{NODE}}'))) return env;
  const w = recipeWorkbench(backend);
  const out: Record<string, string> = { ...w.env };
  for (const [k, v] of Object.entries(env)) out[k] = v.replace(/\{\{WORKBENCH_CLI\}\}/g, w.cli).replace(/\{\{NODE\}\}/g, w.node);
  return out;
};

/** Turns what the launch dialog (or the CLI) asked for into a job spec, recipe defaults first. */
export function buildSpec(req: LaunchRequest, recipes: Recipe[] = loadRecipes(), localPython?: () => string | null): JobSpec {
  const recipe = req.recipe ? recipes.find((r) => r.id === req.recipe) : undefined;
  if (req.recipe && !recipe) throw new DomainError('invalid_input', `Unknown recipe ${req.recipe}`);
  if (!recipe && (!req.command || req.command.length === 0)) throw new DomainError('invalid_input', 'A job needs a recipe or a command');
  if (recipe && !recipe.backends.includes(req.backend)) throw new DomainError('invalid_input', `Recipe ${recipe.id} does not run on the ${req.backend} backend`);
  if (req.backend !== 'local' && !req.ssh && !(req.backend === 'ray' && req.ray?.address && !req.ray.tunnel)) {
    throw new DomainError('invalid_input', `The ${req.backend} backend needs an SSH host`);
  }
  for (const [k, why] of Object.entries(recipe?.fixedEnv ?? {})) {
    const asked = req.env?.[k];
    if (asked !== undefined && asked !== recipe!.env[k]) throw new DomainError('invalid_input', `Recipe ${recipe!.id} sets ${k} itself and it cannot be changed: ${why}`);
  }
  const env = { ...fillDataDir(fillWorkbench(recipe?.env ?? {}, req.backend), req.backend, req.dataDir), ...(req.env ?? {}) };
  for (const k of Object.keys(env)) assertEnvName(k);
  const secretEnv = [...new Set(req.secretEnv ?? [])];
  for (const k of secretEnv) {
    assertEnvName(k);
    if (k in env) throw new DomainError('invalid_input', `${k} is given both as a plain variable and as a secret`);
    // A secret's value is never seen before launch, so a variable the script checks cannot be one.
    if (recipe && k in recipe.envValues) throw new DomainError('invalid_input', `${k} cannot be a secret: its script accepts only ${recipe.envValues[k]!.join(', ')}, so give it as a variable`);
  }
  for (const [k, allowed] of Object.entries(recipe?.envValues ?? {})) {
    const v = env[k];
    if (v !== undefined && v !== '' && !allowed.includes(v)) throw new DomainError('invalid_input', `Recipe ${recipe!.id}: ${k} must be one of ${allowed.join(', ')} (its script refuses ${JSON.stringify(v)})`);
  }
  if (recipe && !recipe.acceptsArgs && req.extraArgs?.length) {
    throw new DomainError('invalid_input', `Recipe ${recipe.id} runs ${recipe.spadeScript ?? recipe.command.join(' ')}, which never reads its arguments: set its variables instead of passing ${req.extraArgs.join(' ')}`);
  }
  const missing = (recipe?.requiredEnv ?? []).filter((k) => !(k in env) && !secretEnv.includes(k));
  if (missing.length) throw new DomainError('invalid_input', `Recipe ${recipe!.id} needs ${missing.join(', ')}`);
  const pool = req.poolDir === null ? null : (req.poolDir ?? defaultPoolDir());
  const slurm: SlurmOptions | undefined =
    req.backend === 'slurm' ? { ...(recipe?.slurm ?? {}), ...(req.slurm ?? {}) } : undefined;
  if (slurm && slurm.gpus === 0) delete slurm.gpus;
  return {
    name: req.name,
    backend: req.backend,
    recipe: recipe?.id,
    command: [...(recipe ? recipe.command.map((a) => (a === '{{PYTHON}}' ? recipePython(req.backend, localPython) : a)) : (req.command ?? [])), ...(req.extraArgs ?? [])],
    workdir: req.workdir ?? (req.backend === 'local' ? '~/.spade-workbench-runs' : '~'),
    env,
    secretEnv,
    ssh: req.ssh,
    slurm,
    // On a shell backend, `ray` names the head the recipe's script submits to (its outcome is that job's).
    ray: req.ray ?? (req.backend !== 'ray' && recipe?.ray ? { ...recipe.ray } : undefined),
    outputs: recipe?.outputs ?? {},
    ship: recipe ? resolveShip(recipe, pool) : [],
    importEnvironments: req.importEnvironments ?? true,
    ...(recipe?.stdin.length ? { stdin: [...recipe.stdin] } : {}),
  };
}
