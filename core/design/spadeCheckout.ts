/**
 * A SPADE checkout read at run time (never copied into the workbench's tree): its designer system
 * prompt, skill descriptions, prompt builders, hint and validator prompts, and its corpus loader,
 * through native/spade_src/read_checkout.py, run as a plain Python child (trusted helper work, as
 * core/runtime/pythonSyntax.ts runs Python's parser): `python3 -I -S`, one JSON request on stdin,
 * one JSON answer on stdout. A checkout that lacks a file or a constant gets an error naming it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { DomainError, invalidInput } from '../errors';
import { runtimePaths } from '../runtime/paths';
import { probePython } from '../runtime/native';

const textsSchema = z.object({
  systemPrompt: z.string(),
  skills: z.record(z.string(), z.string()),
  toolUseSkills: z.record(z.string(), z.string()),
  hint: z.object({ cognitive: z.string(), toolUse: z.string() }),
  validator: z.object({ cognitive: z.object({ system: z.string(), template: z.string() }), toolUse: z.object({ system: z.string(), template: z.string() }) }),
  files: z.array(z.string()),
});
export type SpadeTexts = z.infer<typeof textsSchema> & { src: string };

const promptSchema = z.object({ body: z.string(), builder: z.string() });
const corpusSchema = z.object({ loaded: z.number().int(), docs: z.array(z.object({ docId: z.number().int(), text: z.string(), truncated: z.boolean() })) });

/** Which of SPADE's prompt builders (native/spade_src/read_checkout.py BUILDERS). */
export type PromptKind = 'corpus' | 'multiturn' | 'tool_use_multiturn' | 'tool_use';

export interface CheckoutOptions {
  /** The Python that reads the checkout; the runtime's probed interpreter (or python3) when absent. */
  python?: string;
  timeoutMs?: number;
}

function script(): string {
  const p = join(runtimePaths().nativeDir, 'spade_src', 'read_checkout.py');
  if (!existsSync(p)) throw new DomainError('unavailable', `The checkout reader ${p} is missing from this install`);
  return p;
}

/** One request to the reader; its error answer becomes an invalid_input a person can act on. */
async function ask<T>(schema: z.ZodType<T>, req: Record<string, unknown>, opts: CheckoutOptions = {}): Promise<T> {
  const python = opts.python ?? probePython()?.path ?? 'python3';
  const out = await new Promise<string>((ok, fail) => {
    const child = spawn(python, ['-I', '-S', script()], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new DomainError('unavailable', `Reading the SPADE checkout took over ${(opts.timeoutMs ?? 60_000) / 1000} s`));
    }, opts.timeoutMs ?? 60_000);
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-2000)));
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(new DomainError('unavailable', `Could not start ${python} to read the SPADE checkout: ${e.message}`));
    });
    child.on('close', () => {
      clearTimeout(timer);
      ok(stdout || stderr);
    });
    child.stdin.end(JSON.stringify(req));
  });
  let answer: unknown;
  try {
    answer = JSON.parse(out);
  } catch {
    throw new DomainError('unavailable', `The SPADE checkout reader answered something that is not JSON: ${out.slice(0, 300)}`);
  }
  const a = answer as { ok?: boolean; error?: string; result?: unknown };
  if (!a.ok) throw invalidInput(a.error ?? 'The SPADE checkout could not be read');
  const parsed = schema.safeParse(a.result);
  if (!parsed.success) throw invalidInput(`The SPADE checkout's texts are not in the shape the workbench reads: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

/** Every designer-side text of the checkout at `src`, with the folder it came from. */
export async function readSpadeTexts(src: string, opts: CheckoutOptions = {}): Promise<SpadeTexts> {
  const dir = resolve(src);
  return { ...(await ask(textsSchema, { cmd: 'texts', src: dir }, opts)), src: dir };
}

/** A memory seed as SPADE's EnvironmentRecord carries it into the prompt (env_memory.py:19-27). */
export interface SeedLine {
  name: string;
  skill: string | null;
  winRate: number | null;
  regret: number | null;
  snippet: string;
}

/**
 * SPADE's own builder run on these arguments (its `random` seeded with `seed`); with `seeds`, SPADE's
 * memory appendix too (SpadeOrchestrator._augment_prompt_with_memory over EnvironmentMemory's formats).
 */
export function spadePromptBody(src: string, req: { kind: PromptKind; skill: string; difficulty: string; maxTurns: number; document: string; seed: number; seeds?: { positives: SeedLine[]; negatives: SeedLine[] } }, opts: CheckoutOptions = {}): Promise<{ body: string; builder: string }> {
  return ask(promptSchema, { cmd: 'prompt', src: resolve(src), ...req }, opts);
}

export interface CorpusDraw {
  docId: number;
  text: string;
  truncated: boolean;
}

/**
 * The corpus file loaded and sampled by SPADE's CorpusLoader from the checkout (spade/core/corpus.py:
 * JSONL with "orig_doc" or "text", truncation to `maxDocTokens` words, `random.Random(seed)` and
 * `sample(1)` per attempt, corpus_orchestrator.py:92), `draws` times in order.
 */
export function sampleCorpus(src: string, req: { path: string; maxDocTokens: number; seed: number; draws: number }, opts: CheckoutOptions = {}): Promise<{ loaded: number; docs: CorpusDraw[] }> {
  return ask(corpusSchema, { cmd: 'corpus', src: resolve(src), ...req, path: resolve(req.path) }, opts);
}

/**
 * Python's `str.format(game_code=...)` for SPADE's validator template (env_validator.py:138): `{{`
 * and `}}` are literal braces, `{game_code}` the code; any other field is an error, as in Python.
 */
export function pyFormat(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}|[{}]/g, (m, name: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    if (name !== undefined && Object.hasOwn(values, name)) return values[name]!;
    throw invalidInput(`The template has ${m}, which str.format would not fill`);
  });
}
