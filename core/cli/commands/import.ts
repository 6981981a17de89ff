import { parseArgs } from 'node:util';
import type { Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { importPaths } from '../../memory/importer';
import { openDataDir } from '../../memory/cliDb';

export const importCommand: Command = {
  ...commandInfo('import'),
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { 'data-dir': { type: 'string' }, run: { type: 'string' }, 'follow-links': { type: 'boolean' }, json: { type: 'boolean' }, quiet: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (!positionals.length) throw new UsageError('Give at least one file or folder to import');
    const { db } = openDataDir(values['data-dir']);
    const ctl = new AbortController();
    const stop = () => ctl.abort();
    process.once('SIGINT', stop);
    try {
      let last = 0;
      const s = await importPaths(db, positionals, {
        signal: ctl.signal,
        ...(values.run ? { runId: values.run } : {}),
        // Off by default: a downloaded pool must not make the import read ~/.ssh or /etc.
        ...(values['follow-links'] ? { followLinks: true } : {}),
        onProgress: (p) => {
          if (values.json || values.quiet || Date.now() - last < 500) return;
          last = Date.now();
          io.err(`  ${p.phase}: ${p.files} files, ${p.imported} new, ${p.skipped} skipped`);
        },
      });
      if (values.json) io.out(JSON.stringify(s, null, 2));
      else {
        io.out(
          `Imported ${s.imported} new environment(s); ${s.updated} updated, ${s.unchanged} already present, ${s.statsAttached} stats attached, ${s.skippedTotal} skipped (${(s.durationMs / 1000).toFixed(1)} s).${s.cancelled ? ' Cancelled: run it again to finish.' : ''}`,
        );
        for (const f of s.flagged) io.out(`  flagged  ${f.path}: ${f.flag} (${f.detail})`);
        for (const k of s.skipped) io.out(`  skipped  ${k.path}: ${k.reason}`);
        if (s.skippedTotal > s.skipped.length) io.out(`  … ${s.skippedTotal - s.skipped.length} more skipped: ${Object.entries(s.skippedByReason).map(([k, n]) => `${n} ${k}`).join(', ')}`);
      }
      return s.cancelled ? 130 : 0;
    } finally {
      process.off('SIGINT', stop);
      db.close();
    }
  },
};
