import { parseArgs } from 'node:util';
import type { Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { search } from '../../memory/repository';
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
        limit: { type: 'string', default: '20' },
        json: { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    });
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1-1000');
    if (values.kind && values.kind !== 'game' && values.kind !== 'tool-use') throw new UsageError('--kind must be game or tool-use');
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
        },
      });
      if (values.json) {
        io.out(JSON.stringify(r, null, 2));
        return 0;
      }
      io.out(`${r.total} match(es)${r.total > r.rows.length ? `, showing ${r.rows.length}` : ''}`);
      for (const e of r.rows) {
        const marks = [e.seed ? 'seed' : '', e.rejected ? `rejected${e.rejectionStage ? `:${e.rejectionStage}` : ''}` : '', ...e.tags.map((t) => `#${t}`)].filter(Boolean).join(' ');
        io.out(`${String(e.id).padStart(6)}  ${e.hash.slice(0, 12)}  ${e.name.padEnd(28)} ${(e.skill ?? '-').padEnd(24)} win ${fmtNum(e.winRate)} regret ${fmtNum(e.regret)}  ${marks}`);
      }
      return 0;
    } finally {
      db.close();
    }
  },
};
