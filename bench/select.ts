/**
 * The suites `--only P` runs: every suite under P (`audit` runs audit and audit.scale_ratio), or, for
 * a single row, only the suite that owns it: one that names the row among its own (`owns`), else the
 * longest prefix (`audit.scale_ratio` does not also run the 2,000-environment audit suite).
 */
export function suitesFor<S extends { prefix: string; owns?: readonly string[] }>(suites: S[], p: string): S[] {
  const under = suites.filter((s) => s.prefix === p || s.prefix.startsWith(`${p}.`));
  if (under.length) return under;
  const named = suites.filter((s) => s.owns?.includes(p));
  if (named.length) return named;
  const owners = suites.filter((s) => p.startsWith(`${s.prefix}.`)).sort((a, b) => b.prefix.length - a.prefix.length);
  return owners.slice(0, 1);
}

/** Whether `--only P` prints a row: one under P, or one its suite owns when P selected that suite. */
export function rowShown(suite: { prefix: string; owns?: readonly string[] }, id: string, only: readonly string[]): boolean {
  if (only.length === 0) return true;
  return only.some((p) => id.startsWith(p) || (!!suite.owns?.includes(id) && (suite.prefix === p || suite.prefix.startsWith(`${p}.`) || id === p)));
}
