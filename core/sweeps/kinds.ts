/**
 * The kinds of sweep, as the sweep layer knows them: a name kept with each sweep (`sweeps.kind`),
 * how messages call one, and which of its stored results count as failing. The layer drives every
 * kind the same way (targets, executors, store, owners, progress); what an item is and what its
 * result means belongs to the folder that owns the kind (core/audit: pool audits and the design
 * round's checks; core/episodes: regret sweeps and the design round's plays), which registers it
 * here. The sweep layer imports none of them: they import it.
 */
export interface SweepKindInfo {
  /** The name kept with each sweep and on the engine (Ray submission ids, Slurm job names and folders). */
  kind: string;
  /** How messages name one: "audit sweep", "regret sweep". */
  label: string;
  /** What a person calls a sweep of this kind beside another kind: "a pool audit", "a regret". */
  article: string;
  /**
   * An SQL expression over `result` (the JSON kept for one item) that is true when that result
   * counts as failing, so that a sweep's counts are read in SQLite without parsing every result.
   */
  failingSql: string;
}

const kinds = new Map<string, SweepKindInfo>();

/** Adds a kind (once; the same info again is a no-op, another info under the same name a bug). */
export function registerSweepKind(info: SweepKindInfo): SweepKindInfo {
  const had = kinds.get(info.kind);
  // not-user-facing: two modules claiming one kind name is a programming error caught at load.
  if (had && had !== info) throw new Error(`Sweep kind ${info.kind} is registered twice`);
  kinds.set(info.kind, info);
  return info;
}

/** A registered kind, or null (a sweep stored by a kind this build does not have). */
export function sweepKindInfo(kind: string): SweepKindInfo | null {
  return kinds.get(kind) ?? null;
}
