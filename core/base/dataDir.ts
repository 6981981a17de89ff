import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the workbench keeps its library unless told otherwise (light: the CLI reads it before loading the rest). */
export function defaultDataDir(): string {
  return process.env.SPADE_DATA_DIR || join(homedir(), '.spade-workbench');
}
