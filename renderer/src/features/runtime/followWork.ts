import { backend, refreshHealth } from '../../store/app';

/**
 * The status bar's "design: busy", "pool audit: busy" and "regret sweep: busy" come from app.health,
 * which is polled every few seconds; a round or sweep that ends between two polls left the bar saying
 * busy after the page said done. So the bar asks again whenever a piece of background work starts or
 * ends (only then: sweep progress comes up to four times a second and must not cost a health call each).
 */
export function followBackgroundWork(): void {
  const last = new Map<string, string>();
  const changed = (key: string, state: string): void => {
    if (last.get(key) === state) return;
    last.set(key, state);
    void refreshHealth();
  };
  const b = backend();
  b.on('design.changed', (e) => changed(`design:${e.roundId}`, e.status));
  b.on('audit.sweepProgress', (s) => changed(`audit:${s.id}`, s.state));
  b.on('runs.sweepProgress', (s) => changed(`regret:${s.id}`, s.state));
}
