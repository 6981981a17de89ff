/**
 * The training venv: torch, transformers, TRL, PEFT and gguf at pinned versions, for the local GRPO
 * recipe (core/train/). Kept apart from the runtime's venv (core/runtime/pythonEnv.ts): games never
 * see these packages, and the trainer never runs a game (it reaches them only over serve-env).
 *
 *   trainVenvDir()                      SPADE_WORKBENCH_TRAIN_VENV, else the user's cache (kept between clones, CI reuses it)
 *   findOrCreateTrainVenv({ venvDir })  the venv with TRAIN_REQUIREMENTS, made on first use
 *
 * The whole install is ~5.9 GB (torch from PyPI brings its CUDA libraries), so it lives in the
 * per-user cache rather than the app's data dir or the checkout.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { runLogged, venvPython } from '../runtime/pythonEnv';

/** Pinned together: these five install side by side from PyPI (checked: ~1.5 min, 5.9 GB). */
export const TRAIN_REQUIREMENTS: readonly { name: string; version: string }[] = [
  { name: 'torch', version: '2.15.0' },
  { name: 'transformers', version: '5.23.0' },
  { name: 'trl', version: '1.16.0' },
  { name: 'peft', version: '0.21.2' },
  { name: 'gguf', version: '0.19.0' },
];

const MARKER = 'spade-workbench-train-venv.json';

export function trainVenvDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SPADE_WORKBENCH_TRAIN_VENV) return resolve(env.SPADE_WORKBENCH_TRAIN_VENV);
  const cache = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(cache, 'spade-workbench', 'train-venv');
}

const pins = (): string[] => TRAIN_REQUIREMENTS.map((q) => `${q.name}==${q.version}`);

/** The installed versions of the pinned packages (null where missing), or null when the interpreter does not run. */
export function trainPackages(py: string): Record<string, string | null> | null {
  const code = 'import json,sys\nfrom importlib import metadata\nout={}\nfor n in sys.argv[1:]:\n    try: out[n]=metadata.version(n)\n    except Exception: out[n]=None\nprint(json.dumps({"venv": sys.prefix != sys.base_prefix, "p": out}))';
  const r = spawnSync(py, ['-s', '-c', code, ...TRAIN_REQUIREMENTS.map((q) => q.name)], { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } });
  if (r.status !== 0 || !r.stdout) return null;
  try {
    const j = JSON.parse(r.stdout.trim().split('\n').pop()!) as { venv: boolean; p: Record<string, string | null> };
    return j.venv ? j.p : null;
  } catch {
    return null;
  }
}

function complete(p: Record<string, string | null> | null): boolean {
  return p !== null && TRAIN_REQUIREMENTS.every((q) => p[q.name] === q.version);
}

function marked(venvDir: string): boolean {
  try {
    return JSON.stringify((JSON.parse(readFileSync(join(venvDir, MARKER), 'utf8')) as { requirements?: unknown }).requirements) === JSON.stringify(pins());
  } catch {
    return false;
  }
}

export interface TrainVenvOptions {
  venvDir?: string;
  log?: (line: string) => void;
  /** Default 40 minutes: torch and its CUDA libraries are several GB. */
  timeoutMs?: number;
}

/**
 * The training venv's interpreter: reused when its marker names the same pins and the packages are
 * there at those versions; otherwise made (or repaired) in place. pip only ever runs with the venv's
 * own interpreter, after checking it is a venv.
 */
export async function findOrCreateTrainVenv(o: TrainVenvOptions = {}): Promise<{ python: string; venvDir: string; created: boolean }> {
  const venvDir = o.venvDir ?? trainVenvDir();
  const log = o.log ?? (() => {});
  const timeoutMs = o.timeoutMs ?? 40 * 60_000;
  const py = venvPython(venvDir);
  if (existsSync(py) && marked(venvDir) && complete(trainPackages(py))) return { python: py, venvDir, created: false };
  if (!existsSync(py)) {
    const base = ['python3', '/usr/bin/python3'].find((c) => spawnSync(c, ['-c', 'import venv'], { timeout: 30_000 }).status === 0);
    if (!base) throw new Error('No python3 with the venv module to make the training venv (install python3 and python3-venv)');
    mkdirSync(venvDir, { recursive: true });
    log(`Making the training venv in ${venvDir} with ${base}`);
    await runLogged(base, ['-m', 'venv', venvDir], log, timeoutMs);
  }
  if (trainPackages(py) === null) throw new Error(`${py} is not a virtual environment; refusing to install packages into it`);
  log(`Installing ${pins().join(' ')} (about 5.9 GB, once per machine)`);
  await runLogged(py, ['-m', 'pip', 'install', '--no-input', ...pins()], log, timeoutMs);
  const got = trainPackages(py);
  if (!complete(got)) throw new Error(`The training venv in ${venvDir} still lacks pinned packages after pip install: ${JSON.stringify(got)}`);
  // Written last: an install cut short has no marker and is repaired on the next call.
  writeFileSync(join(venvDir, MARKER), `${JSON.stringify({ requirements: pins(), createdAt: new Date().toISOString() }, null, 2)}\n`);
  return { python: py, venvDir, created: true };
}
