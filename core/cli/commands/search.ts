import { parseArgs } from 'node:util';
import type { Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { search, type SearchInput } from '../../memory/repository';
import { fmtNum, openDataDir } from '../../memory/cliDb';

export const searchCommand: Command = {
  ...commandInfo('search'),
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        kind: { type: 'string' },
        skill: { type: 'string', multiple: true },
        tag: { type: 'string', multiple: true },
        seeds: { type: 'boolean' },
        rejected: { type: 'boolean' },
        model: { type: 'string' },
        frontier: { type: 'boolean' },
        sort: { type: 'string' },
        limit: { type: 'string', default: '20' },
        json: { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    });
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1-1000');
    if (values.kind && values.kind !== 'game' && values.kind !== 'tool-use') throw new UsageError('--kind must be game or tool-use');
    const sorts: Record<string, NonNullable<SearchInput['sort']>> = { regret: { field: 'measuredRegret', dir: 'desc' }, 'win-rate': { field: 'measuredWinRate', dir: 'desc' }, difficulty: { field: 'difficulty', dir: 'desc' }, blend: { field: 'blend', dir: 'desc' }, model: { field: 'model', dir: 'asc' } };
    if (values.sort !== undefined && !sorts[values.sort]) throw new UsageError(`--sort must be one of ${Object.keys(sorts).join(', ')}`);
    const { db } = openDataDir(values['data-dir']);
    try {
      const r = search(db, {
        query: positionals.join(' '),
        limit,
        filters: {
          ...(values.kind ? { kind: values.kind as 'game' | 'tool-use' } : {}),
          ...(values.skill ? { skills: values.skill } : {}),
          ...(values.tag ? { tags: values.tag } : {}),
          ...(values.seeds ? { seed: true } : {}),
          ...(values.rejected ? { rejected: true } : {}),
          ...(values.model ? { measuredBy: values.model } : {}),
          ...(values.frontier ? { frontier: true } : {}),
        },
        ...(values.sort ? { sort: sorts[values.sort]! } : {}),
      });
      if (values.json) {
        // Beside each summary, the names `play --json` uses: what a model run measured (win_rate,
        // regret as measured_regret, model, run_id) and, apart, what a training run recorded.
        const rows = r.rows.map((e) => ({
          ...e,
          model: e.measured?.model ?? null,
          run_id: e.measured?.runId ?? null,
          win_rate: e.measured?.winRate ?? null,
          measured_regret: e.measured?.regret ?? null,
          difficulty_score: e.measured?.difficulty ?? null,
          // SPADE's designer reward of that measurement and its parts (null: regret not measured).
          spade_blend: e.measured?.blend ?? null,
          recorded_regret: e.regret,
          recorded_win_rate: e.winRate,
        }));
        io.out(JSON.stringify({ ...r, rows }, null, 2));
        return 0;
      }
      io.out(`${r.total} match(es)${r.total > r.rows.length ? `, showing ${r.rows.length}` : ''}`);
      for (const e of r.rows) {
        const marks = [e.seed ? 'seed' : '', e.rejected ? `rejected${e.rejectionStage ? `:${e.rejectionStage}` : ''}` : '', ...e.tags.map((t) => `#${t}`)].filter(Boolean).join(' ');
        const m = e.measured ? `measured (${e.measured.model}) win ${fmtNum(e.measured.winRate)} regret ${fmtNum(e.measured.regret)} blend ${e.measured.blend ? fmtNum(e.measured.blend.blend) : 'not measured'}` : 'not measured';
        io.out(`${String(e.id).padStart(6)}  ${e.hash.slice(0, 12)}  ${e.name.padEnd(28)} ${(e.skill ?? '-').padEnd(24)} recorded win ${fmtNum(e.winRate)} regret ${fmtNum(e.regret)}  ${m}  ${marks}`);
      }
      return 0;
    } finally {
      db.close();
    }
  },
};
