// Preloaded with `node --import` by the CLI tests: writes every module specifier the process
// resolves to the file named by SPADE_RECORD_IMPORTS, to show what a command loads.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  appendFileSync(${JSON.stringify(process.env.SPADE_RECORD_IMPORTS ?? '/dev/null')}, specifier + '\\n');
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
