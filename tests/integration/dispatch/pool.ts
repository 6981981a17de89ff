import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { main } from '../../../core/cli/main';
import type { AuditReport } from '../../../core/audit/report';
import { verdictOf } from '../../../core/audit/types';

const root = join(__dirname, '..', '..', '..');

/**
 * The pool the dispatch tests audit everywhere: the seed pack's games (with their hints) and the
 * SPADE corpus, less the three corpus games that read entropy on purpose (r01-r03: their evidence
 * is a fresh random number each run, wherever it runs). 62 files make 60 environments: the importer
 * keeps no file without an Env class (l04, l05), as SPADE loads none.
 */
export function poolFiles(n = 62): string[] {
  const seed = readdirSync(join(root, 'resources', 'seed-pack', 'games')).filter((f) => f.endsWith('.py')).map((f) => join(root, 'resources', 'seed-pack', 'games', f));
  const corpus = readdirSync(join(root, 'tests', 'fixtures', 'spade-corpus'))
    .filter((f) => f.endsWith('.py') && !f.startsWith('_') && !/^r0[123]_/.test(f))
    .map((f) => join(root, 'tests', 'fixtures', 'spade-corpus', f));
  return [...seed.sort(), ...corpus.sort()].slice(0, n);
}

/** Copies the files (and each game's `_hint.txt`) into a folder and imports it into a data dir. */
export async function importPool(dataDir: string, files: readonly string[]): Promise<void> {
  const dir = join(dataDir, 'pool');
  mkdirSync(dir, { recursive: true });
  for (const f of files) {
    copyFileSync(f, join(dir, basename(f)));
    const hint = f.replace(/\.py$/, '_hint.txt');
    if (existsSync(hint)) copyFileSync(hint, join(dir, basename(hint)));
  }
  const r = await cli(['import', dir, '--data-dir', dataDir]);
  if (r.code !== 0) throw new Error(r.err);
}

export async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => void (out += t.endsWith('\n') ? t : `${t}\n`), err: (t) => void (err += `${t}\n`) });
  return { code, out, err };
}

/**
 * What must be identical wherever an environment is audited: SPADE's verdict and every check with
 * its message and evidence, except `timing`, which is a measurement of wall time (its figures, and
 * so its warn/pass line, move with the load of whichever machine ran it), and the overall verdicts
 * computed without it.
 */
export function comparable(r: AuditReport): unknown[] {
  return r.environments.map((e) => {
    const checks = e.checks.filter((c) => c.id !== 'timing');
    return { file: e.file, sha256: e.sha256, name: e.name, spade: e.spade, verdict: verdictOf(checks), checks };
  });
}

/** `--on slurm:...` with the key and known hosts of the test services. */
export function slurmArgs(ci: { user: string; host: string; port: number; key: string; knownHosts: string }): string[] {
  return ['--on', `slurm:${ci.user}@${ci.host}:${ci.port}`, '--ssh-key', ci.key, '--known-hosts', ci.knownHosts];
}
