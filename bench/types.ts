/** One measured figure. `id` is stable: issues and scripts refer to it. */
export interface BenchRow {
  id: string;
  value: number;
  unit: string;
  /** The figure to reach, if an issue names one; `met` is derived from it. */
  goal?: { op: '<=' | '>='; value: number };
  note?: string;
}

export interface BenchSuite {
  /** Every row id of this suite starts with `${prefix}.`; `--only PREFIX` selects suites by it. */
  prefix: string;
  /**
   * Rows outside `prefix` that this suite measures too (a row kept for the record beside the one
   * that replaced it): `--only` with one of these runs this suite, and `--only PREFIX` prints them.
   */
  owns?: readonly string[];
  run(log: (msg: string) => void): Promise<BenchRow[]>;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}
