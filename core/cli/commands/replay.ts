import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CliIO, Command } from '../command';
import { runtimeArg, UsageError } from '../command';
import { commandInfo } from '../catalog';
import { openDatabase } from '../../memory/db';
import { memoryCatalog, type EnvCatalog, type EnvSourceInfo } from '../../episodes/catalog';
import { openDataDir } from '../../memory/cliDb';
import { EpisodeService } from '../../episodes/service';
import { EpisodeStore } from '../../episodes/episodeStore';
import { parseActionsFile } from '../../episodes/actionsFile';
import type { ReplayReport, StepView } from '../../api/calls/episodes';
import { RuntimeService } from '../../runtime/service';

function oneLine(s: string | null, width: number): string {
  if (s === null) return '';
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > width ? `${t.slice(0, width - 1)}\u2026` : t;
}

export function traceTable(steps: StepView[]): string {
  const rows = steps.map((s) => [
    String(s.idx),
    s.kind === 'reset' ? `reset(${s.seed ?? ''})` : oneLine(s.action, 24),
    s.reward === null ? '' : String(s.reward),
    s.terminated ? 'T' : '',
    s.truncated ? 'T' : '',
    s.error ? `${s.error.type}: ${oneLine(s.error.message, 50)}` : oneLine(s.agentObservation ?? s.observation, 70),
  ]);
  const head = ['step', 'action', 'reward', 'term', 'trunc', 'observation'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...rows.map(fmt)].join('\n');
}

function divergenceText(r: ReplayReport): string {
  const d = r.divergence;
  if (!d) return `Replayed ${r.compared} steps: no divergence.`;
  const lines = [
    `FIRST DIVERGENCE at step ${d.idx} (${d.fields.join(', ')})`,
    `  recorded: reward=${d.recorded.reward ?? ''} obs=${JSON.stringify(oneLine(d.recorded.observation, 100))}`,
    `  replayed: ${d.replayed ? `reward=${d.replayed.reward ?? ''} obs=${JSON.stringify(oneLine(d.replayed.observation, 100))}` : '(no step: the replay stopped earlier)'}`,
  ];
  if (d.stateChanges.length) {
    lines.push('  state at that step:');
    for (const c of d.stateChanges.slice(0, 20)) lines.push(`    ${c.kind.padEnd(7)} ${c.path}: ${c.before ?? ''} -> ${c.after ?? ''}`);
  }
  return lines.join('\n');
}

/** The private catalog first; what only the library has is copied into it when asked for. */
function withLibrary(own: EnvCatalog, library: EnvCatalog): EnvCatalog {
  const adopt = (found: EnvSourceInfo | null): EnvSourceInfo | null => {
    if (!found) return null;
    own.add(found.source, found.name, `library:${found.hash.slice(0, 12)}`);
    return { ...(own.byHash(found.hash) ?? found), hint: found.hint, name: found.name };
  };
  return {
    byHash: (hash) => own.byHash(hash) ?? adopt(library.byHash(hash)),
    byStem: (stem) => own.byStem(stem) ?? adopt(library.byStem(stem)),
    add: (source, name, path) => own.add(source, name, path),
  };
}

export const replayCommand: Command = {
  ...commandInfo('replay'),
  async run(argv, io: CliIO) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        seed: { type: 'string' },
        actions: { type: 'string' },
        hint: { type: 'string' },
        'hint-file': { type: 'string' },
        'compare-hint': { type: 'boolean' },
        'max-turns': { type: 'string' },
        runtime: { type: 'string' },
        env: { type: 'string' },
        'seed-search': { type: 'string' },
        json: { type: 'boolean' },
        'data-dir': { type: 'string' },
      },
      strict: true,
    });
    if (positionals.length !== 1) throw new UsageError('Give one ENV.py or EPISODE.jsonl');
    const file = positionals[0]!;
    if (!existsSync(file)) throw new UsageError(`No such file: ${file}`);
    // auto: the sandbox, unless the game needs what it lacks (numpy): as the app decides.
    const runtime = runtimeArg(values.runtime, 'auto');
    // SPADE's budget (SpadeConfig.max_turns)
    const maxTurns = values['max-turns'] === undefined ? 30 : Number(values['max-turns']);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new UsageError(`--max-turns must be a positive integer`);
    if (values.hint !== undefined && values['hint-file'] !== undefined) throw new UsageError('Give --hint or --hint-file, not both');

    // A private in-memory library: the CLI replays files, it does not touch the user's data.
    // With --data-dir, environments are also looked up (read only) in that library, so a recorded
    // episode whose environment is there needs no --env.
    const db = openDatabase(':memory:');
    const library = values['data-dir'] !== undefined ? openDataDir(values['data-dir']).db : null;
    const catalog = library ? withLibrary(memoryCatalog(db), memoryCatalog(library)) : memoryCatalog(db);
    const rt = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns, defaultRuntime: runtime === 'cpython' ? 'cpython' : 'pyodide' }), poolSize: 1 });
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: rt, defaults: () => ({ maxTurns }) });
    try {
      const isEnv = /\.py$/i.test(file);
      const out: { episodes: { episode: unknown; steps: StepView[] }[]; reports: ReplayReport[] } = { episodes: [], reports: [] };
      if (isEnv) {
        if (values.seed === undefined) throw new UsageError('--seed N is required with ENV.py');
        const seed = Number(values.seed);
        if (!Number.isInteger(seed) || seed < 0) throw new UsageError(`--seed must be a non-negative integer, got ${values.seed}`);
        const source = readFileSync(file, 'utf8');
        const hash = catalog.add(source, null, file);
        let hint = values.hint ?? (values['hint-file'] !== undefined ? readFileSync(values['hint-file'], 'utf8') : null);
        const sibling = join(dirname(file), `${basename(file, '.py')}_hint.txt`);
        if (hint === null && values['compare-hint'] && existsSync(sibling)) hint = readFileSync(sibling, 'utf8');
        if (values['compare-hint'] && !hint) throw new UsageError(`--compare-hint needs a hint: --hint, --hint-file, or ${sibling}`);
        const actions = values.actions !== undefined ? parseActionsFile(readFileSync(values.actions, 'utf8')) : null;
        const arms = values['compare-hint'] ? [false, true] : [hint !== null];
        for (const withHint of arms) {
          const opened = await svc.open({ hash, seed, hint: withHint, ...(hint ? { hintText: hint } : {}), maxTurns, runtime, label: file });
          const id = opened.episode.id;
          const policy = actions ? { kind: 'script' as const, actions, extract: true } : { kind: 'solution' as const };
          if (!actions && !opened.episode.meta.hasSolution) io.err('No --actions and the game defines no solution(): only the reset is shown.');
          else await svc.run(id, policy, { kind: 'done' }, 10_000);
          await svc.close(id);
          out.episodes.push(svc.get(id));
          out.reports.push(await svc.replay(id));
        }
        if (arms.length === 2) {
          // With and without the hint the game is the same; only the agent's first observation differs.
          const [a, b] = out.episodes;
          const same = JSON.stringify(a!.steps.map((s) => [s.observation, s.reward, s.terminated, s.truncated])) === JSON.stringify(b!.steps.map((s) => [s.observation, s.reward, s.terminated, s.truncated]));
          if (!same) io.err('The hinted and unhinted runs differ for the same seed and actions: the game is not deterministic.');
        }
      } else {
        const text = readFileSync(file, 'utf8');
        const firstLine = text.split('\n').find((l) => l.trim()) ?? '';
        let isEpisodes = false;
        try {
          isEpisodes = (JSON.parse(firstLine) as { format?: unknown }).format === 'spade-workbench.episode';
        } catch {
          isEpisodes = false;
        }
        if (isEpisodes) {
          if (values.env) catalog.add(readFileSync(values.env, 'utf8'), null, values.env);
          const imported = svc.importJsonl(text);
          for (const s of imported.skipped) io.err(`line ${s.line} skipped: ${s.reason}`);
          for (const id of imported.ids) {
            out.episodes.push(svc.get(id));
            out.reports.push(await svc.replay(id));
          }
        } else {
          if (!values.env) throw new UsageError('Replaying a trajectory (messages) needs --env ENV.py: the file does not carry the environment');
          const source = readFileSync(values.env, 'utf8');
          const hash = catalog.add(source, null, values.env);
          const limit = values['seed-search'] === undefined ? 1000 : Number(values['seed-search']);
          const res = await svc.importTrajectories({ text, fileName: basename(file), envHash: hash, ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}), seedSearchLimit: limit, runtime });
          for (const r of res.results) {
            if (r.seedFrom === 'search' || r.seedFrom === 'none') io.err(r.seed === null ? `trajectory: no seed in 0..${limit - 1} gives its first observation` : `trajectory: seed ${r.seed} found by search (${r.seedsTried} tried)`);
            out.episodes.push(svc.get(r.episodeId));
            out.reports.push(r.report);
          }
        }
        if (out.episodes.length === 0) throw new UsageError('Nothing to replay in the file');
      }
      const diverged = out.reports.some((r) => r.divergence);
      if (values.json) io.out(JSON.stringify({ ...out, episodes: out.episodes.map(withToolTurns) }, null, 2));
      else {
        out.episodes.forEach((e, i) => {
          const ep = e.episode as { id: number; hintEnabled: boolean; seed: number | null; className: string | null; origin: string };
          io.out(`${i ? '\n' : ''}Episode ${ep.id} (${ep.origin}) ${ep.className ?? ''} seed=${ep.seed ?? '?'} hint=${ep.hintEnabled ? 'on' : 'off'}`);
          if (ep.hintEnabled && e.steps[0]?.agentObservation) io.out(`First observation as the agent saw it:\n${e.steps[0].agentObservation}\n`);
          io.out(traceTable(e.steps));
          io.out(divergenceText(out.reports[i]!));
        });
      }
      return diverged ? 1 : 0;
    } finally {
      await svc.closeAll();
      await rt.shutdown();
      db.close();
      library?.close();
    }
  },
};

/**
 * An episode for --json with its tool turns in place: each call's execute_tool output follows the
 * step it came after, as `{kind: 'tool', ...}` (reward 0, never ending the episode: docs/spade-formats.md section 4).
 */
function withToolTurns(e: { episode: unknown; steps: StepView[] }): { episode: unknown; steps: unknown[] } {
  const meta = (e.episode as { meta?: { agent?: { toolTurns?: { afterIdx: number; calls: { name: string; arguments: unknown }[]; outputs: { output: string; returncode: number }[] }[] } } }).meta;
  const turns = meta?.agent?.toolTurns ?? [];
  if (!turns.length) return e;
  const steps: unknown[] = [];
  const toolsAfter = (idx: number) => {
    for (const t of turns.filter((x) => x.afterIdx === idx)) {
      t.outputs.forEach((o, i) => steps.push({ kind: 'tool', via: 'tool', call: t.calls[i] ?? null, observation: o.output, returncode: o.returncode, reward: 0, terminated: false, truncated: false, info: {} }));
    }
  };
  for (const s of e.steps) {
    steps.push(s);
    toolsAfter(s.idx);
  }
  return { ...e, steps };
}
