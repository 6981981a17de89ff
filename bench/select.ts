/**
 * The suites `--only P` runs: every suite under P (`audit` runs audit and audit.scale_ratio), or, for
 * a single row, only the suite that owns it: the longest prefix (`audit.scale_ratio` does not also
 * run the 2,000-environment audit suite).
 */
export function suitesFor<S extends { prefix: string }>(suites: S[], p: string): S[] {
  const under = suites.filter((s) => s.prefix === p || s.prefix.startsWith(`${p}.`));
  if (under.length) return under;
  const owners = suites.filter((s) => p.startsWith(`${s.prefix}.`)).sort((a, b) => b.prefix.length - a.prefix.length);
  return owners.slice(0, 1);
}
