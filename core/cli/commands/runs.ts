import { parseArgs } from 'node:util';
import type { Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { fmtNum, openDataDir } from '../../memory/cliDb';
import { memoryCatalog } from '../../episodes/catalog';
import { RunService } from '../../runs/service';
import { SettingsStore } from '../../memory/settingsStore';
import { DomainError } from '../../errors';

const signed = (v: number | null) => (v === null ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`);
const short = (name: string | null, hash: string) => (name ?? hash.slice(0, 12)).slice(0, 28).padEnd(28);

/** `runs list | show ID | compare A B`: model runs as the library keeps them (read only). */
export const runsCommand: Command = {
  ...commandInfo('runs'),
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        model: { type: 'string' },
        env: { type: 'string' },
        selection: { type: 'string' },
        status: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string', default: '50' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
    const [sub, ...rest] = positionals;
    if (sub !== 'list' && sub !== 'show' && sub !== 'compare') throw new UsageError('Give list, show ID or compare A B');
    if (sub === 'list' && rest.length) throw new UsageError('runs list takes no run ids');
    if (sub === 'show' && rest.length !== 1) throw new UsageError('runs show takes one run id');
    if (sub === 'compare' && rest.length !== 2) throw new UsageError('runs compare takes two run ids: A B');
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1-1000');
    const status = values.status;
    if (status !== undefined && !['running', 'done', 'cancelled', 'failed'].includes(status)) throw new UsageError('--status must be running, done, cancelled or failed');
    const { db } = openDataDir(values['data-dir']);
    const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => new SettingsStore(db).get().runMinSuccess });
    try {
      if (sub === 'list') {
        const r = runs.list({ model: values.model, envHash: values.env, selection: values.selection, status: status as 'done' | undefined, from: values.since, limit });
        if (values.json) return io.out(JSON.stringify(r, null, 2)), 0;
        io.out(`${r.total} run(s)${r.total > r.rows.length ? `, showing ${r.rows.length}` : ''}`);
        for (const x of r.rows) {
          io.out(`${x.id.padEnd(24)} ${x.startedAt.slice(0, 16).replace('T', ' ')}  ${x.model.slice(0, 24).padEnd(24)} ${x.status.padEnd(9)} ${String(x.hashes.length).padStart(4)} env(s) × ${x.seeds} seed(s)  ${x.episodes.total}/${x.episodes.expected} episodes${x.failedText ? `, ${x.failedText}` : ''}`);
        }
        return 0;
      }
      if (sub === 'show') {
        const v = runs.get(rest[0]!);
        if (values.json) return io.out(JSON.stringify(v, null, 2)), 0;
        io.out(`run ${v.run.id}: ${v.run.model} at ${v.run.endpoint}, ${v.run.status}${v.run.error ? ` (${v.run.error})` : ''}`);
        io.out(`seeds ${v.run.seedStart}..${v.run.seedStart + v.run.seeds - 1}, arms ${v.run.arms.join('+')}, budget ${v.run.maxTurns}, runtime ${v.run.runtime}, hint from ${v.run.hintSource}${v.run.selection ? `, selection "${v.run.selection}"` : ''}`);
        io.out(`${v.episodes.total} of ${v.episodes.expected} episodes recorded${v.failedText ? `; ${v.failedText}` : ''}`);
        io.out('');
        for (const e of v.envs) {
          const nums = e.notMeasured ? `not measured (${e.notMeasured})` : `R(hint) ${fmtNum(e.rHint, 3)}  R(no hint) ${fmtNum(e.rNoHint, 3)}  regret ${fmtNum(e.regret, 3)}  win rate ${fmtNum(e.winRate, 3)}  difficulty ${fmtNum(e.difficulty, 3)}`;
          io.out(`${short(e.envName, e.envHash)} ${nums}`);
          for (const x of e.episodes.filter((p) => p.status === 'failed')) io.out(`    failed: seed ${x.seed} ${x.hint ? 'with' : 'without'} hint: ${x.error ?? 'no return'}`);
        }
        return 0;
      }
      const c = runs.compare(rest[0]!, rest[1]!);
      if (values.json) return io.out(JSON.stringify(c, null, 2)), 0;
      io.out(`A ${c.a.run.id} (${c.a.run.model})  vs  B ${c.b.run.id} (${c.b.run.model}); ${c.shared} environment(s) in both`);
      io.out(`${'environment'.padEnd(28)} ${'regret A'.padStart(9)} ${'regret B'.padStart(9)} ${'Δ regret'.padStart(9)} ${'win A'.padStart(7)} ${'win B'.padStart(7)} ${'Δ win'.padStart(7)}`);
      for (const r of c.rows) {
        io.out(`${short(r.envName, r.envHash)} ${fmtNum(r.a?.regret ?? null, 3).padStart(9)} ${fmtNum(r.b?.regret ?? null, 3).padStart(9)} ${signed(r.regretDelta).padStart(9)} ${fmtNum(r.a?.winRate ?? null).padStart(7)} ${fmtNum(r.b?.winRate ?? null).padStart(7)} ${signed(r.winRateDelta).padStart(7)}`);
      }
      if (c.disagree.length) io.out(`\nmost apart: ${c.disagree.slice(0, 5).map((r) => `${r.envName ?? r.envHash.slice(0, 12)} (Δ regret ${signed(r.regretDelta)})`).join(', ')}`);
      return 0;
    } catch (e) {
      if (e instanceof DomainError && e.code === 'not_found') throw new UsageError(e.message);
      throw e;
    } finally {
      db.close();
    }
  },
};
