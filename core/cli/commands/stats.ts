import { parseArgs } from 'node:util';
import type { Command } from '../command';
import { commandInfo } from '../catalog';
import { libraryStats } from '../../memory/repository';
import { openDataDir } from '../../memory/cliDb';

export const statsCommand: Command = {
  ...commandInfo('stats'),
  async run(argv, io) {
    const { values } = parseArgs({ args: argv, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' } }, strict: true });
    const { db, dataDir } = openDataDir(values['data-dir']);
    try {
      const s = libraryStats(db);
      if (values.json) {
        io.out(JSON.stringify(s, null, 2));
        return 0;
      }
      io.out(`Library in ${dataDir}`);
      io.out(`  environments ${s.environments}  versions ${s.versions}  hints ${s.hints}`);
      io.out(`  seeds ${s.seeds}  rejected ${s.rejected}  flagged ${s.flagged}  database ${(s.databaseBytes / 1024 / 1024).toFixed(1)} MiB`);
      io.out('  by kind:  ' + (s.byKind.map((k) => `${k.value} ${k.count}`).join(', ') || '-'));
      io.out('  by skill:');
      for (const k of s.bySkill) io.out(`    ${k.value.padEnd(26)} ${k.count}`);
      return 0;
    } finally {
      db.close();
    }
  },
};
