import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { exportEnvironmentsAsync } from '../../memory/exporter';
import { selectIds } from '../../memory/repository';
import { openDataDir } from '../../memory/cliDb';
import { RunStore } from '../../runs/runStore';

export const exportCommand: Command = {
  ...commandInfo('export'),
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        seeds: { type: 'boolean' },
        tag: { type: 'string' },
        query: { type: 'string' },
        all: { type: 'boolean' },
        format: { type: 'string', default: 'spade' },
        model: { type: 'string' },
        json: { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1) throw new UsageError('Give exactly one output folder');
    if (values.format !== 'spade' && values.format !== 'jsonl') throw new UsageError(`--format must be spade or jsonl, not ${values.format}`);
    if (!values.seeds && !values.tag && !values.all && values.query === undefined) throw new UsageError('Choose what to export: --seeds, --tag T, --query Q or --all');
    const { db } = openDataDir(values['data-dir']);
    try {
      // --query: the library's query language (core/memory/query.ts), as every selection takes it.
      const ids = selectIds(db, { ...(values.seeds ? { seeds: true } : {}), ...(values.tag ? { tag: values.tag } : {}), ...(values.query !== undefined ? { query: values.query } : {}) });
      if (!ids.length) {
        io.err('Nothing matches that selection; nothing was written.');
        return 1;
      }
      const out = resolve(positionals[0]!);
      const r = await exportEnvironmentsAsync(db, ids, { format: values.format, outDir: out, measuredBy: values.model ?? null }, new RunStore(db));
      if (values.json) io.out(JSON.stringify({ ...r, outDir: out }, null, 2));
      else {
        io.out(`Exported ${r.count} environment(s) to ${out} (${r.files.length} files, format ${values.format}).`);
        for (const n of r.notes) io.out(`Note: ${n}`);
      }
      return 0;
    } finally {
      db.close();
    }
  },
};
