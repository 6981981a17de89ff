import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runtimePaths } from '../runtime/paths';

/**
 * What travels between the workbench and a shard runner on a cluster (native/dispatch/shard_*.py):
 * an item per line out, a raw result per item back. What an item and a result hold beyond the key
 * is the kind's business (core/audit/sweepKind.ts, core/episodes/regretRemote.ts): its SweepWork
 * makes the one and reads the other.
 */
export interface RemoteResult {
  key: string;
  node?: string;
  /** The interpreter could not be started: nothing was judged, so nothing is stored and a resume retries it. */
  failed?: string;
  /** What the kind's runner adds (shard_audit.py: the harness reply; shard_regret.py: the episode's harness calls). */
  [more: string]: unknown;
}

/** One result line (a JSONL line, or a Ray log line after its marker); null when it is not one. */
export function parseRemoteResult(text: string): RemoteResult | null {
  try {
    const r = JSON.parse(text) as RemoteResult;
    return r && typeof r === 'object' && typeof r.key === 'string' ? r : null;
  } catch {
    return null; // a line cut short by a kill; the environment is run again
  }
}

/** The harness and the shard runner, as the files a cluster gets (`native/...`). */
export function harnessFiles(): { name: string; data: Buffer }[] {
  const dir = runtimePaths().nativeDir;
  const out: { name: string; data: Buffer }[] = [];
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub)).sort()) {
      const rel = sub ? `${sub}/${name}` : name;
      if (name === '__pycache__' || name.startsWith('.')) continue;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.py')) out.push({ name: `native/${rel}`, data: readFileSync(join(dir, rel)) });
    }
  };
  walk('');
  return out;
}

/** What every shard runner is told: the interpreter to sandbox (on the node), the limits, the options. */
export interface ShardConfig {
  python: string;
  envTimeoutSec: number;
  memoryMb: number;
  workers: number;
  options: unknown;
  /** The shard runner a Ray task imports (native/dispatch/<runner>.py). */
  runner?: string;
  shardSize?: number;
  cpusPerTask?: number;
}

export function itemsJsonl(items: readonly Record<string, unknown>[]): Buffer {
  return Buffer.from(items.map((i) => JSON.stringify(i)).join('\n') + '\n', 'utf8');
}
