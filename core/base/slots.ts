/**
 * At most `size` holders at once, the rest waiting in order: the audit pool's executors and the
 * bench's unwalled baseline share it, so the baseline waits exactly as the pool does.
 */
export class Slots {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async take(): Promise<void> {
    if (this.active < this.size) {
      this.active++;
      return;
    }
    await new Promise<void>((r) => this.queue.push(r));
  }

  /** Hands the slot to the next waiter, or frees it. */
  give(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.active--;
  }

  /** Wakes every waiter (a closing pool: each then sees it closed). */
  wakeAll(): void {
    for (const r of this.queue.splice(0)) r();
  }
}
