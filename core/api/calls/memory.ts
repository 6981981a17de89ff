import { z } from 'zod';
import { boundedHint, boundedSource } from '../limits';
import { hashSchema, idSchema } from '../schemas';
import { defineCall, defineEvent } from '../contract';
import { blendPartsSchema } from '../blendParts';

/** Environment memory: the library of environments, their versions, hints, tags and SPADE stats. */

export const envKindSchema = z.enum(['game', 'tool-use']);
const range = z.object({ min: z.number().optional(), max: z.number().optional() }).strict();
const id = idSchema;
const hash = hashSchema;
const tag = z.string().trim().min(1).max(64).regex(/^[^\s,]+$/, 'A tag cannot contain spaces or commas.');

export const memoryFiltersSchema = z
  .object({
    kind: envKindSchema.optional(),
    skills: z.array(z.string().max(100)).max(50).optional(),
    /** Every listed tag must be present. */
    tags: z.array(tag).max(20).optional(),
    seed: z.boolean().optional(),
    rejected: z.boolean().optional(),
    rejectionStage: z.string().max(100).optional(),
    validation: z.string().max(100).optional(),
    flagged: z.boolean().optional(),
    /** A run id (source_run) the environment was seen in. */
    run: z.string().max(500).optional(),
    /** A path prefix the environment was imported from. */
    source: z.string().max(4096).optional(),
    jobId: z.string().max(200).optional(),
    winRate: range.optional(),
    regret: range.optional(),
    rHint: range.optional(),
    rNoHint: range.optional(),
    rating: range.optional(),
    rolloutStep: range.optional(),
    /** The stored audit of the head version: one check's status, or (no checkId) the verdict. */
    audit: z
      .object({ checkId: z.string().min(1).max(100).optional(), status: z.enum(['pass', 'warn', 'fail', 'skip']) })
      .strict()
      .optional(),
    /** Whose measurement the Regret / Win rate / Model columns show and sort by (a model run's model); absent: the newest of any model. */
    measuredBy: z.string().max(300).optional(),
    /** The measured win rate is in SPADE's frontier band, 0.15-0.85 (false: outside it, or not measured). */
    frontier: z.boolean().optional(),
  })
  .strict();
export type MemoryFilters = z.infer<typeof memoryFiltersSchema>;

export const sortFields = ['relevance', 'name', 'skill', 'kind', 'updated', 'created', 'regret', 'winRate', 'rHint', 'rNoHint', 'rating', 'rolloutStep', 'measuredRegret', 'measuredWinRate', 'model', 'difficulty', 'blend'] as const;
export const memorySortSchema = z.object({ field: z.enum(sortFields), dir: z.enum(['asc', 'desc']) }).strict();
export type MemorySort = z.infer<typeof memorySortSchema>;

export const envSummarySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: envKindSchema,
  skill: z.string().nullable(),
  hash: z.string(),
  seed: z.boolean(),
  rating: z.number().int().nullable(),
  rejected: z.boolean(),
  rejectionStage: z.string().nullable(),
  validation: z.string().nullable(),
  flags: z.array(z.string()),
  sourceRun: z.string().nullable(),
  rolloutStep: z.number().int().nullable(),
  winRate: z.number().nullable(),
  regret: z.number().nullable(),
  rHint: z.number().nullable(),
  rNoHint: z.number().nullable(),
  tags: z.array(z.string()),
  updatedAt: z.string(),
  /**
   * What a model run measured for the head version (the chosen model's newest, else any model's);
   * winRate/regret above are what a training run recorded (imported), kept apart.
   */
  measured: z
    .object({
      model: z.string(),
      runId: z.string(),
      regret: z.number().nullable(),
      winRate: z.number().nullable(),
      rHint: z.number().nullable(),
      rNoHint: z.number().nullable(),
      /** SPADE's fixed-model difficulty_score, 1 - |p - 0.5| / 0.5. */
      difficulty: z.number().nullable(),
      frontier: z.boolean(),
      /**
       * SPADE's designer reward from this measurement's mean unhinted reward (rNoHint) and regret
       * (core/api/blendParts.ts); null when its regret was not measured. Sort field `blend`.
       */
      blend: blendPartsSchema.nullable(),
      seeds: z.number().int(),
      failed: z.number().int(),
      updatedAt: z.string(),
      /** Which estimator made `regret`: SPADE's, or the workbench's paired seeds (core/episodes/estimator.ts). */
      estimator: z.enum(['spade', 'paired']),
    })
    .nullable()
    .optional(),
});
export type EnvSummary = z.infer<typeof envSummarySchema>;

export const versionInfoSchema = z.object({
  hash: z.string(),
  envId: z.number().int(),
  parentHash: z.string().nullable(),
  className: z.string().nullable(),
  bytes: z.number().int(),
  message: z.string(),
  createdAt: z.string(),
});
export type VersionInfo = z.infer<typeof versionInfoSchema>;

export const envDetailSchema = envSummarySchema.extend({
  notes: z.string(),
  rejectionReason: z.string().nullable(),
  fileStem: z.string().nullable(),
  sourcePath: z.string().nullable(),
  jobId: z.string().nullable(),
  meta: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  source: z.string(),
  hint: z.string().nullable(),
  hints: z.array(z.object({ id: z.number().int(), text: z.string(), origin: z.string(), versionHash: z.string().nullable(), createdAt: z.string() })),
  versions: z.array(versionInfoSchema),
  sightings: z.array(z.object({ path: z.string(), run: z.string().nullable(), rolloutStep: z.number().int().nullable(), jobId: z.string().nullable(), seenAt: z.string() })),
});
export type EnvDetail = z.infer<typeof envDetailSchema>;

/** How many skipped files or lines a summary lists by name; the rest are counted per reason. */
export const SKIPPED_EXAMPLES = 200;

export const importSummarySchema = z.object({
  paths: z.array(z.string()),
  files: z.number().int(),
  imported: z.number().int(),
  unchanged: z.number().int(),
  updated: z.number().int(),
  statsAttached: z.number().int(),
  /** The first SKIPPED_EXAMPLES things skipped, in order; a million broken lines must not become a million entries. */
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  skippedTotal: z.number().int(),
  /** Every skip counted by the kind of reason ("broken JSON", "outside the chosen folders", ...). */
  skippedByReason: z.record(z.string(), z.number().int()),
  /** Where every skipped file or line was written, one JSON object per line (absent when none was, or no log was asked for). */
  skippedLog: z.string().optional(),
  flagged: z.array(z.object({ path: z.string(), flag: z.string(), detail: z.string() })),
  cancelled: z.boolean(),
  durationMs: z.number(),
});
export type ImportSummary = z.infer<typeof importSummarySchema>;

export const importProgressSchema = z.object({
  jobId: z.string(),
  phase: z.enum(['scanning', 'importing', 'stats', 'done', 'failed']),
  files: z.number().int(),
  imported: z.number().int(),
  unchanged: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  currentPath: z.string().optional(),
  summary: importSummarySchema.optional(),
  error: z.string().optional(),
});
export type ImportProgress = z.infer<typeof importProgressSchema>;

const facetList = z.array(z.object({ value: z.string(), count: z.number().int() }));
const selection = z
  .object({
    ids: z.array(id).max(100_000).optional(),
    seeds: z.boolean().optional(),
    tag: tag.optional(),
    query: z.string().max(500).optional(),
    filters: memoryFiltersSchema.optional(),
  })
  .strict();

export const memoryCalls = {
  'memory.search': defineCall({
    name: 'memory.search',
    summary: 'Full-text search with filters, sorting and paging; an empty query lists the library.',
    input: z
      .object({
        query: z.string().max(500).default(''),
        filters: memoryFiltersSchema.default({}),
        sort: memorySortSchema.optional(),
        offset: z.number().int().min(0).max(10_000_000).default(0),
        limit: z.number().int().min(1).max(1000).default(100),
      })
      .strict(),
    // capped: the query matched more than `total` (counting stops at 10,000 to stay fast).
    output: z.object({ total: z.number().int(), capped: z.boolean(), rows: z.array(envSummarySchema) }),
  }),
  'memory.get': defineCall({
    name: 'memory.get',
    summary: 'One environment with its head source, hints, versions (lineage) and sightings.',
    input: z.union([z.object({ id }).strict(), z.object({ hash }).strict()]),
    output: envDetailSchema,
  }),
  'memory.version': defineCall({
    name: 'memory.version',
    summary: 'One version (source and lineage) by its content hash.',
    input: z.object({ hash }).strict(),
    output: versionInfoSchema.extend({ source: z.string() }),
  }),
  'memory.versions': defineCall({
    name: 'memory.versions',
    summary: 'Every version of an environment, oldest first.',
    input: z.object({ envId: id }).strict(),
    output: z.array(versionInfoSchema),
  }),
  'memory.addVersion': defineCall({
    name: 'memory.addVersion',
    summary: 'Store an edited source as a new version whose parent is the given hash; the old one stays.',
    input: z.object({ envId: id, source: boundedSource(z.string().min(1)), parentHash: hash, message: z.string().max(2000).default('') }).strict(),
    output: z.object({ hash: z.string(), created: z.boolean() }),
  }),
  'memory.matchingIds': defineCall({
    name: 'memory.matchingIds',
    summary: 'Ids of every environment a search matches (newest first, at most 100,000): "select all matching".',
    input: z.object({ query: z.string().max(500).default(''), filters: memoryFiltersSchema.default({}) }).strict(),
    output: z.object({ ids: z.array(z.number().int()), truncated: z.boolean() }),
  }),
  'memory.setSeed': defineCall({
    name: 'memory.setSeed',
    summary: 'Mark or unmark environments as seeds.',
    input: z.object({ ids: z.array(id).min(1).max(100_000), seed: z.boolean() }).strict(),
    output: z.object({ changed: z.number().int() }),
  }),
  'memory.tag': defineCall({
    name: 'memory.tag',
    summary: 'Add and/or remove tags on environments.',
    input: z.object({ ids: z.array(id).min(1).max(100_000), add: z.array(tag).max(20).default([]), remove: z.array(tag).max(20).default([]) }).strict(),
    output: z.object({ changed: z.number().int() }),
  }),
  'memory.setStats': defineCall({
    name: 'memory.setStats',
    summary: "Store a measured result (a regret run's returns with and without the hint) as the stats of the environment that holds a version.",
    input: z
      .object({
        hash,
        regret: z.number().finite(),
        rHint: z.number().finite(),
        rNoHint: z.number().finite(),
        /** The share of unhinted episodes won, when measured. */
        winRate: z.number().min(0).max(1).optional(),
      })
      .strict(),
    output: envDetailSchema,
  }),
  'memory.jobImports': defineCall({
    name: 'memory.jobImports',
    summary: "What a job's results brought into the library: environments imported or updated, stats attached, records skipped (with examples).",
    input: z.object({ jobId: z.string().min(1).max(200) }).strict(),
    output: z.object({
      imports: z.number().int(),
      imported: z.number().int(),
      updated: z.number().int(),
      unchanged: z.number().int(),
      statsAttached: z.number().int(),
      skipped: z.number().int(),
      recordsUnmatched: z.number().int(),
      examples: z.array(z.object({ path: z.string(), reason: z.string() })),
    }),
  }),
  'memory.snippets': defineCall({
    name: 'memory.snippets',
    summary: 'Where each listed environment matches a search: the first matching line of its code, hint, notes or name.',
    input: z.object({ query: z.string().max(500), ids: z.array(id).max(500) }).strict(),
    output: z.array(
      z.object({ id: z.number().int(), field: z.enum(['name', 'code', 'hint', 'notes']), line: z.number().int(), text: z.string(), start: z.number().int(), end: z.number().int() }),
    ),
  }),
  'memory.update': defineCall({
    name: 'memory.update',
    summary: 'Change notes, rating, name, skill, or add a new hint (hints are versioned).',
    input: z
      .object({
        id,
        notes: z.string().max(100_000).optional(),
        rating: z.number().int().min(0).max(5).nullable().optional(),
        name: z.string().trim().min(1).max(200).optional(),
        skill: z.string().trim().max(100).nullable().optional(),
        hint: boundedHint(z.string().trim().min(1)).optional(),
      })
      .strict(),
    output: envDetailSchema,
  }),
  'memory.import': defineCall({
    name: 'memory.import',
    summary: 'Start importing files or folders (SPADE layouts, JSONL); progress comes as memory.importProgress events.',
    input: z
      .object({
        paths: z.array(z.string().min(1).max(4096)).min(1).max(100),
        jobId: z.string().regex(/^[\w.:-]{1,100}$/).optional(),
        runId: z.string().max(500).optional(),
        /** Follow manifest entries and symlinks that lead outside the chosen paths (off: they are listed as not followed). */
        followLinks: z.boolean().optional(),
      })
      .strict(),
    output: z.object({ jobId: z.string() }),
  }),
  'memory.importCancel': defineCall({
    name: 'memory.importCancel',
    summary: 'Stop an import after the batch in flight; what was committed stays.',
    input: z.object({ jobId: z.string().max(100) }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
  'memory.importStatus': defineCall({
    name: 'memory.importStatus',
    summary: 'The latest progress of an import started in this session.',
    input: z.object({ jobId: z.string().max(100) }).strict(),
    output: importProgressSchema,
  }),
  'memory.export': defineCall({
    name: 'memory.export',
    summary: "Write a selection in SPADE's own layout or as JSONL into a folder.",
    input: z.object({ selection, format: z.enum(['spade', 'jsonl']), outDir: z.string().min(1).max(4096) }).strict(),
    // notes: what the export left out and why (no env_memory.json when no game has a win rate).
    output: z.object({ count: z.number().int(), files: z.array(z.string()), notes: z.array(z.string()), outDir: z.string() }),
  }),
  'memory.stats': defineCall({
    name: 'memory.stats',
    summary: 'Library totals: environments, versions, seeds, rejected, by kind and skill, database size.',
    input: z.object({}).strict(),
    output: z.object({
      environments: z.number().int(),
      versions: z.number().int(),
      hints: z.number().int(),
      seeds: z.number().int(),
      rejected: z.number().int(),
      flagged: z.number().int(),
      byKind: facetList,
      bySkill: facetList,
      databaseBytes: z.number().int(),
    }),
  }),
  'memory.facets': defineCall({
    name: 'memory.facets',
    summary: "Counts per kind, skill, tag, run, validation, rejection stage and audit result for a query (each ignoring its own filter).",
    input: z.object({ query: z.string().max(500).default(''), filters: memoryFiltersSchema.default({}) }).strict(),
    output: z.object({
      kinds: facetList,
      skills: facetList,
      tags: facetList,
      /** value: the run id the filter takes; label: the job's name when a job imported it. */
      runs: z.array(z.object({ value: z.string(), count: z.number().int(), label: z.string().nullable() })),
      validation: facetList,
      rejectionStages: facetList,
      seeds: z.number().int(),
      rejected: z.number().int(),
      /** Stored audits of the head versions: per verdict, and per check the number failing it. */
      audit: z.object({ verdicts: facetList, failing: facetList }),
    }),
  }),
} as const;

const memoryChangeSchema = z.object({ ids: z.array(z.number().int()).optional(), reason: z.string() });
/** What changed in the library: every service that edits environments reports it in this one shape. */
export type MemoryChange = z.infer<typeof memoryChangeSchema>;

export const memoryEvents = {
  'memory.importProgress': defineEvent({ name: 'memory.importProgress', summary: 'Progress of an import, ending with phase done (with the summary) or failed.', payload: importProgressSchema }),
  'memory.changed': defineEvent({
    name: 'memory.changed',
    summary: 'Environments were added or changed (import, tags, seeds, edits); lists refresh.',
    payload: memoryChangeSchema,
  }),
} as const;
