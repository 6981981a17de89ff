import type { CliIO } from './command';
import { UsageError } from './command';
import { catalog as commands } from './catalog';
import { appVersion } from '../base/appInfo';
import { errorMessage } from '../api/errorMessage'; // not ../api: --help must not load zod

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

/**
 * Output piped into `head` (or a closed terminal) is not an error of ours: stop quietly, with
 * the status a shell gives a reader that went away, instead of an EPIPE stack trace.
 */
function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
}

export async function main(argv: string[], io: CliIO = stdio): Promise<number> {
  if (io === stdio) quietOnClosedPipe();
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(helpText());
    return name ? 0 : 1;
  }
  if (name === '--version' || name === '-v') {
    io.out(appVersion());
    return 0;
  }
  const info = commands.find((c) => c.name === name);
  if (!info) {
    io.err(`Unknown command: ${name}\n\n${helpText()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`${info.summary}\n\nUsage: ${info.usage}`);
    return 0;
  }
  try {
    return await (await info.load()).run(rest, io);
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))) {
      io.err(`${e.message}\nUsage: ${info.usage}`);
      return 2;
    }
    io.err(`Error: ${errorMessage(e)}`);
    return 1;
  }
}
