import type { CliIO, Command } from './command';
import { UsageError } from './command';
import { serveCommand } from './commands/serve';
import { importCommand } from './commands/import';
import { exportCommand } from './commands/export';
import { searchCommand } from './commands/search';
import { statsCommand } from './commands/stats';
import { auditCommand } from './commands/audit';
import { replayCommand } from './commands/replay';
import { playCommand } from './commands/play';
import { appVersion } from '../services/appInfo';

/** Every subcommand, in the order `--help` lists them. Later features append theirs. */
export const commands: Command[] = [serveCommand, importCommand, exportCommand, searchCommand, statsCommand, auditCommand, replayCommand, playCommand];

const stdio: CliIO = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
};

export function helpText(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `spade-workbench ${appVersion()}: a research workbench for SPADE-style generated environments`,
    '',
    'Usage: spade-workbench <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `spade-workbench <command> --help` for the options of one command.',
    'Data lives in ~/.spade-workbench unless --data-dir (or SPADE_DATA_DIR) says otherwise.',
  ].join('\n');
}

export async function main(argv: string[], io: CliIO = stdio): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(helpText());
    return name ? 0 : 1;
  }
  if (name === '--version' || name === '-v') {
    io.out(appVersion());
    return 0;
  }
  const cmd = commands.find((c) => c.name === name);
  if (!cmd) {
    io.err(`Unknown command: ${name}\n\n${helpText()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`${cmd.summary}\n\nUsage: ${cmd.usage}`);
    return 0;
  }
  try {
    return await cmd.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))) {
      io.err(`${e.message}\nUsage: ${cmd.usage}`);
      return 2;
    }
    io.err(`Error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
