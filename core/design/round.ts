/**
 * A design round: `count` games over the chosen skills (round-robin, as SPADE assigns skills), each
 * designed attempt by attempt (core/design/attempt.ts) with every attempt saved as it lands; an
 * accepted game enters memory as a new environment whose lineage (the round, its parents: the seeds
 * it was shown) is kept, then is played, and the round can be written in SPADE's layout.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../memory/db';
import { envIdOfHash, ingest } from '../memory/repository';
import { sha256 } from '../memory/parse';
import { classifyGame } from './prompt';
import { designGame, type DesignDeps, type DesignProgress, type GameRecord, type GameSpec, type PlayOutcome } from './attempt';
import { SNIPPET_CHARS } from './seeds';
import { createRound, finishGame, finishRound, memoryRecords, roundView, saveAttempt, startGame, type LayoutParent, type RoundView } from './designStore';
import { errorMessage } from '../api/errors';
import { writeRejectedGame } from './envValidator';

export interface RoundSpec extends Omit<GameSpec, 'skill' | 'memory'> {
  skills: string[];
  count: number;
  /** Restrict the memory seeds are drawn from to these environments (a search); all when absent. */
  memoryIds?: number[] | null;
  /** The designer's model name, kept with each attempt. */
  designerModel: string;
  /** Seeds use this model's measured numbers where it has played a game (core/design/designStore.ts memoryRecords). */
  seedsModel?: string | null;
  /** The round's id when the caller names it (a service that answers with the id before the round ends). */
  id?: string;
  /** What the caller keeps with the round's configuration: the endpoints, the environment a variants round started from. */
  extra?: Record<string, unknown>;
}

export interface RoundDeps extends DesignDeps {
  db: Db;
  /** Plays a game now in memory (by its version hash) hinted and unhinted; idx is the game's place in the round. */
  play?(hash: string, hint: string | null, idx: number): Promise<PlayOutcome>;
}

export type RoundProgress = DesignProgress & { game: number; games: number; skill: string };

export const newRoundId = (): string => `design-${randomUUID().slice(0, 8)}`;

export async function runRound(spec: RoundSpec, deps: RoundDeps, onProgress: (p: RoundProgress) => void = () => {}, signal?: AbortSignal): Promise<RoundView> {
  if (!spec.skills.length) throw new Error('Name at least one skill');
  const id = spec.id ?? newRoundId();
  // The round says where its prompts came from: SPADE's checkout (read at run time) or the workbench's own template.
  const { prompts, ...rest } = spec;
  const promptsFrom = prompts?.kind === 'spade' ? { kind: 'spade', src: prompts.src, files: prompts.texts?.files ?? [] } : { kind: 'workbench', src: null, note: "the workbench's own template, not SPADE's" };
  const seq = createRound(deps.db, id, { ...rest, prompts: promptsFrom, template: spec.template.length > 200 ? `${spec.template.slice(0, 200)}…` : spec.template });
  const memory = memoryRecords(deps.db, spec.memoryIds, spec.seedsModel);
  try {
    for (let i = 0; i < spec.count && !signal?.aborted; i++) {
      const skill = spec.skills[i % spec.skills.length]!;
      startGame(deps.db, id, i, skill);
      const game: GameRecord = await designGame(
        { ...spec, skill, memory, seed: spec.seed + i * 1000, rollout: seq },
        { designer: deps.designer, ...(deps.hinter ? { hinter: deps.hinter } : {}), check: deps.check, ...(deps.checkHint ? { checkHint: deps.checkHint } : {}), ...(deps.sleep ? { sleep: deps.sleep } : {}), ...(deps.validator ? { validator: deps.validator } : {}) },
        { progress: (p) => onProgress({ ...p, game: i + 1, games: spec.count, skill }), attempt: (a) => saveAttempt(deps.db, id, i, spec.designerModel, a) },
        signal,
      );
      let env: { id: number; hash: string } | null = null;
      if (game.accepted && game.code !== null) {
        const accepted = game.attempts.at(-1)!;
        ingest(deps.db, {
          source: game.code,
          path: `${id}/game ${i}`,
          name: game.className,
          skill,
          hint: game.hint,
          run: `design round ${seq}`,
          rolloutStep: seq,
          meta: { design: { round: id, seq, game: i, attempt: accepted.n, parents: game.parents, designer: spec.designerModel } },
          tags: ['designed'],
        });
        const hash = sha256(game.code);
        const envId = envIdOfHash(deps.db, hash);
        if (envId !== null) env = { id: envId, hash };
        if (deps.play && env && !signal?.aborted) {
          onProgress({ stage: 'playing', attempt: accepted.n, of: spec.attempts, game: i + 1, games: spec.count, skill });
          try {
            game.play = await deps.play(hash, game.hint, i);
            if (game.play.episodes - game.play.failed > 0) {
              const c = classifyGame(game.play.winRate);
              game.cls = c.cls;
              game.difficultyScore = c.difficultyScore;
            }
          } catch (e) {
            // The game stays accepted and in memory; only its numbers are missing, and say why.
            game.playError = errorMessage(e);
          }
        }
      }
      finishGame(deps.db, id, i, game, env);
    }
    finishRound(deps.db, id, signal?.aborted ? 'cancelled' : 'done');
  } catch (e) {
    finishRound(deps.db, id, 'failed', errorMessage(e));
  }
  return roundView(deps.db, id)!;
}

const slug = (skill: string) => skill.toLowerCase().replace(/ /g, '_');

/**
 * The round in SPADE's layout under `out`: spade_games/game_{seq:05d}_{idx:03d}_{slug}.py (with
 * SPADE's header line), spade_games_cache/step_{seq:05d}/ with a copy and {stem}_hint.txt, and
 * spade_games_cache/env_memory.json with a record for each played game (SPADE needs numbers there).
 * Beside each game, `{stem}.json` names its parents by hash and the round that made it: SPADE reads
 * only the .py, and the workbench's importer keeps the lineage when the round ran on another machine.
 */
export function writeSpadeLayout(out: string, round: RoundView, codeOf: (hash: string) => string | null, parentsOf: (ids: number[]) => LayoutParent[] = () => []): string[] {
  const games = join(out, 'spade_games');
  const step = join(out, 'spade_games_cache', `step_${String(round.seq).padStart(5, '0')}`);
  mkdirSync(games, { recursive: true });
  mkdirSync(step, { recursive: true });
  const written: string[] = [];
  const memory: Record<string, unknown>[] = [];
  for (const g of round.games) {
    if (!g.accepted || !g.env_hash) continue;
    const code = codeOf(g.env_hash);
    if (code === null) continue;
    const stem = `game_${String(round.seq).padStart(5, '0')}_${String(g.idx).padStart(3, '0')}_${slug(g.skill)}`;
    const text = `"""SPADE self-play generated game"""\n\n${code}`;
    const file = join(games, `${stem}.py`);
    writeFileSync(file, text);
    writeFileSync(join(step, `${stem}.py`), text);
    written.push(file);
    if (g.hint !== null) writeFileSync(join(step, `${stem}_hint.txt`), g.hint);
    const spec = `${JSON.stringify({ skill: g.skill, parents: parentsOf(g.parents), design: { round: round.id, seq: round.seq, game: g.idx, attempts: g.attempts.length } }, null, 2)}\n`;
    writeFileSync(join(games, `${stem}.json`), spec);
    writeFileSync(join(step, `${stem}.json`), spec);
    if (g.win_rate !== null && g.regret !== null) {
      memory.push({ game_file: file, skill: g.skill, code_snippet: text.slice(0, SNIPPET_CHARS), actor_win_rate: g.win_rate, regret: g.regret, rollout_id: round.seq, metadata: {} });
    }
  }
  writeFileSync(join(out, 'spade_games_cache', 'env_memory.json'), `${JSON.stringify(memory, null, 2)}\n`);
  writeRejected(out, round);
  return written;
}

/**
 * The attempts SPADE's trainer saves when it refuses them (save_rejected_game,
 * spade/core/utils/game_files.py:39-60): the reset gate's and the LLM validator's, as
 * spade_games_rejected/reject_{rollout:05d}_{index:03d}_{slug}_{stage}.py with its header and a
 * `.reason.txt` holding the reasoning (the validator's whole answer). Like SPADE, a later attempt
 * of the same game and stage replaces an earlier one.
 */
function writeRejected(out: string, round: RoundView): void {
  for (const g of round.games) {
    for (const a of g.attempts) {
      const v = a.acceptance;
      if (!v || v.accepted || (v.kind !== 'env_validator' && v.kind !== 'criteria_throw_at_reset')) continue;
      writeRejectedGame(out, { code: a.code, rollout: round.seq, index: g.idx, skill: g.skill, stage: v.kind, reasoning: v.kind === 'env_validator' ? (v.reasoning ?? '') : (v.reason ?? '') });
    }
  }
}
