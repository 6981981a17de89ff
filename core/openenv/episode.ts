/**
 * One OpenEnv environment instance (a /ws connection, or one stateless HTTP /reset): it plays SPADE
 * games through the workbench's EpisodeService, so every episode runs in the runtime's sandbox (a
 * forked CPython in bubblewrap, or Pyodide) and is recorded in the library like any other, with
 * SPADE's rules:
 *  - the observation is what SPADE's agent sees: the reset observation, with `\n\nHINT: {hint}`
 *    appended when hinted (docs/spade-formats.md section 3), then each step's converted observation;
 *  - the action is the agent's text, from which SPADE's extraction takes the action (section 2);
 *  - the episode ends at the first step whose converted `terminated or truncated` is true, or after
 *    the budget of agent turns (SpadeConfig.max_turns, 30 by default);
 *  - `reward` is 0 until the end and then SPADE's episode return (the last reward clamped to
 *    [-1, 1] when that step terminated, else 0: section 2), so a trainer that sums or takes the last
 *    reward gets what SPADE trains with; each step's own converted reward rides in `step_reward`.
 */
import { DomainError } from '../errors';
import type { EpisodeService } from '../episodes/service';
import type { RuntimeChoice } from '../episodes/context';
import { episodeReturn } from '../episodes/spade';
import { firstPrompt } from '../episodes/hint';
import type { SpadeReward } from '../api/spadeStep';
import type { StepView } from '../api/calls/episodes';
import type { HintMode, ServedEnv, Task } from './tasks';
import type { ResetData } from './wire';

export interface Served {
  svc: EpisodeService;
  envs: ServedEnv[];
  tasks: Task[];
  hint: HintMode;
  maxTurns: number;
  runtime: RuntimeChoice;
  /** Round robin over the task list for resets that name no task. */
  nextTask(): Task;
}

export interface OpenEnvResult {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

interface Current {
  episodeId: number;
  task: Task;
  openEnvEpisodeId: string | null;
  turn: number;
  done: boolean;
  ret: number | null;
  endedBy: 'env' | 'budget' | null;
}

/** float() as JSON carries it: a number, or the Python spelling of what JSON has no number for. */
function rewardJson(r: SpadeReward | undefined | null): number | string | null {
  if (r === undefined || r === null) return null;
  return r;
}

export class OpenEnvInstance {
  private cur: Current | null = null;
  private stepCount = 0;

  constructor(
    private readonly served: Served,
    private readonly label: string,
  ) {}

  /** Which task a reset means: its task_id, else its env/seed/hint over the next task of the list. */
  private pick(d: ResetData): Task {
    const { tasks, envs, hint } = this.served;
    if (d.task_id !== undefined && d.task_id !== null) {
      const t = typeof d.task_id === 'number' ? tasks[d.task_id] : tasks.find((x) => x.task_id === d.task_id);
      if (!t) throw new DomainError('not_found', `No task ${JSON.stringify(d.task_id)} (GET /tasks lists the ${tasks.length} tasks)`);
      return t;
    }
    const base = tasks.length ? this.served.nextTask() : null;
    let env: ServedEnv | undefined;
    if (d.env !== undefined && d.env !== null) {
      const ref = d.env.toLowerCase();
      const matches = envs.filter((e) => (ref.length >= 8 && e.hash.startsWith(ref)) || e.name === d.env);
      if (matches.length !== 1) throw new DomainError(matches.length ? 'invalid_input' : 'not_found', matches.length ? `"${d.env}" names ${matches.length} served environments; give its hash` : `No served environment "${d.env}" (GET /tasks lists them)`);
      env = matches[0];
    } else env = envs.find((e) => e.hash === base?.env_hash) ?? envs[0];
    if (!env) throw new DomainError('not_found', 'This server serves no environment');
    const withHint = d.hint ?? (base && base.env_hash === env.hash ? base.hint : hint === 'on');
    if (withHint && hint === 'off') throw new DomainError('invalid_input', 'This server serves unhinted episodes only (--hint off)');
    if (!withHint && hint === 'on') throw new DomainError('invalid_input', 'This server serves hinted episodes only (--hint on)');
    if (withHint && env.hint === null) throw new DomainError('invalid_input', `${env.name ?? env.hash.slice(0, 12)} has no hint; it is played unhinted only`);
    const seed = d.seed ?? base?.seed ?? 0;
    return tasks.find((t) => t.env_hash === env.hash && t.seed === seed && t.hint === withHint) ?? { task_id: `${env.hash.slice(0, 12)}:${seed}:${withHint ? 'hint' : 'nohint'}`, index: -1, env_hash: env.hash, env_name: env.name, seed, hint: withHint };
  }

  async reset(d: ResetData): Promise<OpenEnvResult> {
    const task = this.pick(d);
    await this.release();
    const { svc } = this.served;
    const opened = await svc.open({ hash: task.env_hash, seed: task.seed, hint: task.hint, maxTurns: this.served.maxTurns, runtime: this.served.runtime, label: this.label });
    const first = opened.steps[0];
    this.cur = { episodeId: opened.episode.id, task, openEnvEpisodeId: d.episode_id ?? null, turn: 0, done: false, ret: null, endedBy: null };
    this.stepCount = 0;
    const text = first ? first.agentObservation ?? first.observation ?? '' : '';
    return { observation: { ...this.common(), text, prompt: firstPrompt(text), action: null, step_reward: null, terminated: false, truncated: false, info: first?.info ?? {}, ended_by: null, episode_return: null, metadata: {} }, reward: 0, done: false };
  }

  async step(message: string): Promise<OpenEnvResult> {
    const c = this.cur;
    if (!c) throw new DomainError('conflict', 'No episode: send a reset first');
    if (c.done) throw new DomainError('conflict', `The episode is over (${c.endedBy === 'budget' ? `its budget of ${this.served.maxTurns} turns is used` : 'the game ended it'}); send a reset to start another`);
    const r = await this.served.svc.act(c.episodeId, message, true);
    const s: StepView | undefined = r.steps.at(-1);
    if (!s) throw new DomainError('unavailable', 'The runtime returned no step');
    c.turn++;
    this.stepCount++;
    const sp = s.spade ?? null;
    const terminated = sp ? sp.terminated : s.terminated;
    const truncated = sp ? sp.truncated : s.truncated;
    const ended = terminated || truncated;
    const budget = !ended && c.turn >= this.served.maxTurns;
    let reward = 0;
    if (ended || budget) {
      c.done = true;
      c.endedBy = ended ? 'env' : 'budget';
      c.ret = sp ? episodeReturn([{ kind: 'step', spade: sp }], 'env') : 0;
      reward = c.ret;
      // The live interpreter is not needed after the end; the recording stays.
      await this.served.svc.close(c.episodeId).catch(() => false);
    }
    return {
      observation: { ...this.common(), text: sp?.observation ?? s.observation ?? '', prompt: null, action: s.action, step_reward: rewardJson(sp ? sp.reward : s.reward), terminated, truncated, info: sp?.info ?? s.info, ended_by: c.endedBy, episode_return: c.ret, metadata: {} },
      reward,
      done: c.done,
    };
  }

  private common(): Record<string, unknown> {
    const c = this.cur!;
    return { task_id: c.task.task_id, env_hash: c.task.env_hash, env_name: c.task.env_name, seed: c.task.seed, hint: c.task.hint, turn: c.turn, workbench_episode: c.episodeId };
  }

  /** types.py State: episode_id and step_count, with what the workbench knows of the episode. */
  state(): Record<string, unknown> {
    const c = this.cur;
    if (!c) return { episode_id: null, step_count: 0 };
    return { episode_id: c.openEnvEpisodeId ?? `workbench-${c.episodeId}`, step_count: this.stepCount, task_id: c.task.task_id, env_hash: c.task.env_hash, env_name: c.task.env_name, seed: c.task.seed, hint: c.task.hint, done: c.done, episode_return: c.ret, ended_by: c.endedBy, workbench_episode: c.episodeId };
  }

  /** Closes the live interpreter of the current episode (its recording stays). */
  async release(): Promise<void> {
    const c = this.cur;
    this.cur = null;
    if (c && !c.done) await this.served.svc.close(c.episodeId).catch(() => false);
  }
}
