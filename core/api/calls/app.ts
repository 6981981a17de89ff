import { z } from 'zod';
import { runtimeKindSchema } from '../schemas';
import { defineCall, defineEvent } from '../contract';

export const themeSchema = z.enum(['system', 'light', 'dark']);

export const settingsSchema = z.object({
  theme: themeSchema,
  /** Per-call time limit for environment code, in seconds (SPADE uses 30 s). */
  stepTimeoutSec: z.number().int().min(1).max(600),
  /** Turn budget handed to environments that accept max_turns (SPADE's paper scripts use 25). */
  maxTurns: z.number().int().min(1).max(10_000),
  /** Preferred runtime for environments that do not force one. */
  defaultRuntime: runtimeKindSchema,
  /** Where audits run: the Pyodide sandbox (games that need numpy still go native) or native CPython. */
  auditRuntime: runtimeKindSchema,
  /**
   * Run native CPython even where no OS sandbox (bubblewrap) is available: off by default, and the
   * status bar says so while it is on.
   */
  allowUnsandboxedNative: z.boolean().default(false),
  /**
   * A model run's regret and win rate count only when at least this share of each arm's seeds
   * played without failing (1: every seed of both arms); otherwise they show as not measured.
   */
  runMinSuccess: z.number().gt(0).max(1).default(1),
  /**
   * A SPADE checkout (its root folder): design rounds read SPADE's designer prompts, skill
   * descriptions, hint prompts and corpus loader from it at run time. Null: the workbench's own template.
   */
  spadeSrc: z.string().min(1).max(4096).nullable().default(null),
});
export type Settings = z.infer<typeof settingsSchema>;

export const integritySchema = z.object({
  checked: z.enum(['quick', 'full']),
  ok: z.boolean(),
  problems: z.array(z.string()),
  /** The check stopped listing at its limit: there are at least problems.length. */
  truncated: z.boolean(),
  checkedAt: z.string(),
});

const databaseHealthSchema = z.object({
  ok: z.boolean(),
  schemaVersion: z.number().int(),
  message: z.string().optional(),
  /** SQLite's structural check: quick at every open, full on demand (app.checkDatabase). */
  integrity: integritySchema,
  /** Writes are refused until the user chooses (app.resumeWrites), because the file failed its check. */
  writesPaused: z.boolean(),
});

export const appCalls = {
  'app.info': defineCall({
    name: 'app.info',
    summary: 'Version, platform and where this workbench keeps its data.',
    input: z.object({}).strict(),
    output: z.object({
      name: z.string(),
      version: z.string(),
      shell: z.enum(['electron', 'web', 'in-process']),
      platform: z.string(),
      dataDir: z.string(),
      databasePath: z.string(),
      nodeVersion: z.string(),
      /** The desktop offers its native file/folder picker (app.pickPaths); the web host has none. */
      picker: z.boolean(),
    }),
  }),
  'app.health': defineCall({
    name: 'app.health',
    summary: 'Liveness of the backend and its parts.',
    input: z.object({}).strict(),
    output: z.object({
      ok: z.boolean(),
      uptimeSec: z.number(),
      database: databaseHealthSchema,
      components: z.array(z.object({ name: z.string(), state: z.enum(['ready', 'busy', 'starting', 'down', 'off']), detail: z.string() })),
    }),
  }),
  'app.checkDatabase': defineCall({
    name: 'app.checkDatabase',
    summary: "Check the database file's structure now (full: SQLite's integrity_check, slower; else quick_check).",
    input: z.object({ full: z.boolean().default(true) }).strict(),
    output: databaseHealthSchema,
  }),
  'app.resumeWrites': defineCall({
    name: 'app.resumeWrites',
    summary: 'Keep writing to a database that failed its integrity check (the user chose to, knowing the risk).',
    input: z.object({ confirm: z.literal(true) }).strict(),
    output: databaseHealthSchema,
  }),
  'settings.get': defineCall({
    name: 'settings.get',
    summary: 'All settings with defaults filled in.',
    input: z.object({}).strict(),
    output: settingsSchema,
  }),
  'settings.update': defineCall({
    name: 'settings.update',
    summary: 'Change some settings; returns the full result.',
    input: settingsSchema.partial().strict(),
    output: settingsSchema,
  }),
  'app.pickPaths': defineCall({
    name: 'app.pickPaths',
    summary: "The desktop's native file/folder picker; the web host has none and returns available: false.",
    input: z.object({ title: z.string().max(200).default('Choose'), folders: z.boolean().default(true), multiple: z.boolean().default(true) }).strict(),
    output: z.object({ available: z.boolean(), paths: z.array(z.string()) }),
  }),
  'app.openExternal': defineCall({
    name: 'app.openExternal',
    summary: 'Open an http(s) link in the system browser (desktop only; the web host declines).',
    input: z.object({ url: z.string().max(2048) }).strict(),
    output: z.object({ opened: z.boolean() }),
  }),
} as const;

export const appEvents = {
  'settings.changed': defineEvent({ name: 'settings.changed', summary: 'Settings were updated.', payload: settingsSchema }),
  'log.line': defineEvent({
    name: 'log.line',
    summary: 'A line for the Logs panel.',
    payload: z.object({ time: z.string(), level: z.enum(['debug', 'info', 'warn', 'error']), source: z.string(), message: z.string() }),
  }),
  'ui.command': defineEvent({
    name: 'ui.command',
    summary: 'The desktop menu asks the UI to run one of its commands (save, palette, quick open).',
    payload: z.object({ command: z.string() }),
  }),
} as const;
