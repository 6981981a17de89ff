/**
 * What a model run's progress line says, in the CLI as on the app's pages: tokens a second (what the
 * model wrote over the time it spent writing), time per turn, and an estimate of what is left from
 * the episodes done so far. The numbers come from the completions themselves (ChatClient's
 * onCompletion), so a slow machine shows as slow turns, not as a silent wait.
 */
import type { Completion } from './client';

export class Throughput {
  private turns = 0;
  private tokens = 0;
  private ms = 0;
  private readonly t0 = performance.now();

  add(c: Pick<Completion, 'usage' | 'latencyMs'>): void {
    this.turns++;
    this.tokens += c.usage?.completion_tokens ?? 0;
    this.ms += c.latencyMs;
  }

  /** `3/8 episodes · 12 turns, 4.1 s a turn · 69.9 tokens/s · about 25 s left` (what is known so far). */
  line(done: number, total: number, now = performance.now()): string {
    const parts = [`${done}/${total} episodes`];
    if (this.turns) {
      parts.push(`${this.turns} turn${this.turns === 1 ? '' : 's'}, ${fmtSeconds(this.ms / this.turns)} a turn`);
      if (this.tokens && this.ms > 0) parts.push(`${((this.tokens / this.ms) * 1000).toFixed(1)} tokens/s`);
    }
    if (done > 0 && done < total) parts.push(`about ${fmtSeconds(((now - this.t0) / done) * (total - done))} left`);
    return parts.join(' · ');
  }
}

function fmtSeconds(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s - m * 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
