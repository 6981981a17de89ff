/**
 * The local GRPO recipe (`spade-workbench train`, Jobs → "Train locally (GRPO)"): serve the selected
 * environments over OpenEnv's protocol on 127.0.0.1 (core/openenv, in this process, every episode in
 * the runtime's sandbox), run TRL's GRPOTrainer with a LoRA adapter in the training venv
 * (resources/train/spade_grpo.py, which reaches the games only over /ws), then evaluate: serve the
 * base model and the checkpoint over an OpenAI-compatible server (resources/train/spade_serve_model.py)
 * and play the run's environments on held-back seeds, hinted and unhinted, as two model runs
 * (`play --selection`), compared per environment (Runs → compare).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { basename, dirname, join } from 'node:path';
import { unpackedRoot } from '../base/appInfo';

export interface TrainSettings {
  selection: string;
  model: string;
  ggufFile: string | null;
  steps: number;
  groupSize: number;
  promptsPerStep: number;
  loraRank: number;
  lr: number;
  maxTurns: number;
  maxNewTokens: number;
  hintShare: number;
  boxedReward: number;
  trainSeeds: number;
  evalSeeds: number;
  /** Save a checkpoint-N adapter every N steps (0: only adapter-final), each one evaluable. */
  saveEvery: number;
  out: string;
}

export function trainScript(name: 'spade_grpo.py' | 'spade_serve_model.py'): string {
  return join(unpackedRoot(), 'resources', 'train', name);
}

/** A model argument as transformers loads it: a .gguf file is its folder plus `gguf_file=`. */
export function modelArgs(model: string): { model: string; ggufFile: string | null } {
  if (model.toLowerCase().endsWith('.gguf')) return { model: dirname(model), ggufFile: basename(model) };
  return { model, ggufFile: null };
}

export function trainerArgv(s: TrainSettings, url: string): string[] {
  return [
    trainScript('spade_grpo.py'), '--url', url, '--model', s.model, ...(s.ggufFile ? ['--gguf-file', s.ggufFile] : []), '--out', s.out,
    '--steps', String(s.steps), '--group-size', String(s.groupSize), '--prompts-per-step', String(s.promptsPerStep),
    '--lora-rank', String(s.loraRank), '--lr', String(s.lr), '--max-turns', String(s.maxTurns), '--max-new-tokens', String(s.maxNewTokens),
    '--hint-share', String(s.hintShare), '--boxed-reward', String(s.boxedReward), '--save-every', String(s.saveEvery),
  ];
}

/**
 * Runs a Python child, each stdout line to `line`, stderr to `err`; resolves with its exit code.
 * `signal` ends it (SIGTERM, then SIGKILL after 5 s): a cancelled job leaves no trainer behind.
 */
export function runPython(python: string, argv: string[], o: { line: (l: string) => void; err: (l: string) => void; signal?: AbortSignal; onStart?: (c: ChildProcess) => void }): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(python, ['-u', ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONWARNINGS: process.env.PYTHONWARNINGS ?? 'ignore::FutureWarning', TOKENIZERS_PARALLELISM: 'false', HF_HUB_OFFLINE: process.env.HF_HUB_OFFLINE ?? '1' } });
    o.onStart?.(child);
    createInterface({ input: child.stdout! }).on('line', o.line);
    createInterface({ input: child.stderr! }).on('line', (l) => {
      // transformers' progress bars redraw one line many times: they are noise in a job log.
      if (!/de-quantizing GGUF|Loading weights:/.test(l)) o.err(l);
    });
    const stop = () => {
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 5000).unref();
    };
    o.signal?.addEventListener('abort', stop, { once: true });
    child.on('error', fail);
    child.on('close', (code, sig) => {
      o.signal?.removeEventListener('abort', stop);
      done(code ?? (sig ? 128 + 15 : 1));
    });
  });
}
