import { z } from 'zod';
import { boundedHint, boundedSource } from '../limits';
import { hashSchema, idSchema } from '../schemas';
import { defineCall } from '../contract';
import { envDetailSchema, envKindSchema, versionInfoSchema } from './memory';

/**
 * The editor: drafts that survive a crash, saves that add content-addressed versions, diffs of any
 * two versions (or the draft), new environments and forks, and the checks shown as markers.
 */

const id = idSchema;
const hash = hashSchema;
const source = boundedSource(z.string());
const hintText = boundedHint(z.string());

export const draftSchema = z.object({
  envId: z.number().int(),
  /** The version the draft was edited from: its parent when saved. */
  baseHash: z.string().nullable(),
  source: z.string(),
  /** Null when only the code was edited. */
  hint: z.string().nullable(),
  updatedAt: z.string(),
});
export type Draft = z.infer<typeof draftSchema>;

/** One problem in a source, 1-based lines and columns as Monaco wants them. */
export const diagnosticSchema = z.object({
  severity: z.enum(['error', 'warning', 'info']),
  message: z.string(),
  line: z.number().int().min(1),
  column: z.number().int().min(1),
  endLine: z.number().int().min(1),
  endColumn: z.number().int().min(1),
  /** Which checker said it: python-syntax, spade-load, audit... */
  source: z.string(),
  /** For load checks: the SPADE stage that failed (exec, class, instantiate, reset, step...). */
  stage: z.string().optional(),
});
export type Diagnostic = z.infer<typeof diagnosticSchema>;

export const loadCheckSchema = z.object({
  /** False when no runtime could run the checks (the result says why in `detail`). */
  ran: z.boolean(),
  ok: z.boolean(),
  detail: z.string(),
  diagnostics: z.array(diagnosticSchema),
});
export type LoadCheck = z.infer<typeof loadCheckSchema>;

export const writeBackPreviewSchema = z.object({
  path: z.string(),
  state: z.enum(['missing', 'same', 'differs']),
  fileSource: z.string().nullable(),
  fileHash: z.string().nullable(),
  fileIsKnownVersion: z.boolean(),
  hash: z.string(),
  proposed: z.string(),
  /** A unified diff from the file as it is to the version (applies with `git apply` / `patch -p1`). */
  patch: z.string(),
});
export type WriteBackPreview = z.infer<typeof writeBackPreviewSchema>;

const diffSide = z.union([z.object({ hash }).strict(), z.object({ draft: id }).strict()]);

export const editorCalls = {
  'editor.open': defineCall({
    name: 'editor.open',
    summary: 'An environment with its draft (if one was left unsaved), ready for a tab.',
    input: z.object({ envId: id }).strict(),
    output: z.object({ env: envDetailSchema, draft: draftSchema.nullable() }),
  }),
  'editor.drafts': defineCall({
    name: 'editor.drafts',
    summary: 'Every unsaved draft, newest first, so a restarted window can reopen them.',
    input: z.object({}).strict(),
    output: z.array(z.object({ envId: z.number().int(), name: z.string(), baseHash: z.string().nullable(), updatedAt: z.string() })),
  }),
  'editor.draftSave': defineCall({
    name: 'editor.draftSave',
    summary: 'Keep the unsaved text of a tab (code and optionally hint); replaces the previous draft.',
    input: z.object({ envId: id, baseHash: hash, source, hint: hintText.nullable().default(null) }).strict(),
    output: z.object({ updatedAt: z.string() }),
  }),
  'editor.draftDiscard': defineCall({
    name: 'editor.draftDiscard',
    summary: 'Drop the draft of an environment; the saved versions stay.',
    input: z.object({ envId: id }).strict(),
    output: z.object({ discarded: z.boolean() }),
  }),
  'editor.save': defineCall({
    name: 'editor.save',
    summary: 'Save the edited code (and hint) as a new version whose parent is the edited one; the draft is dropped and the quick SPADE loading checks run.',
    input: z
      .object({
        envId: id,
        parentHash: hash,
        source: source.min(1),
        hint: hintText.nullable().default(null),
        message: z.string().max(2000).default(''),
        /** Skip the loading checks (bulk work, tests). */
        check: z.boolean().default(true),
        /** Chosen by the caller: editor.checkLoadCancel with it stops the checks after the save (the version stays saved). */
        requestId: z.string().regex(/^[\w.:-]{1,100}$/, { message: 'A request id is 1 to 100 letters, digits, dots, colons or dashes' }).optional(),
      })
      .strict(),
    output: z.object({ hash: z.string(), created: z.boolean(), versions: z.array(versionInfoSchema), check: loadCheckSchema }),
  }),
  'editor.revert': defineCall({
    name: 'editor.revert',
    summary: 'Make an older version the head again; nothing is deleted and the lineage records the move.',
    input: z.object({ envId: id, hash }).strict(),
    output: z.object({ hash: z.string(), versions: z.array(versionInfoSchema) }),
  }),
  'editor.versions': defineCall({
    name: 'editor.versions',
    summary: 'Every version of an environment, oldest first, with the current head.',
    input: z.object({ envId: id }).strict(),
    output: z.object({ head: z.string(), versions: z.array(versionInfoSchema) }),
  }),
  'editor.diff': defineCall({
    name: 'editor.diff',
    summary: 'The two sources to compare: any two versions, or a draft against a version.',
    input: z.object({ left: diffSide, right: diffSide }).strict(),
    output: z.object({
      left: z.object({ label: z.string(), source: z.string() }),
      right: z.object({ label: z.string(), source: z.string() }),
    }),
  }),
  'editor.create': defineCall({
    name: 'editor.create',
    summary: 'A new environment from a snippet, a file or pasted text.',
    input: z
      .object({
        source: source.min(1),
        name: z.string().trim().min(1).max(200).optional(),
        kind: envKindSchema.optional(),
        skill: z.string().trim().max(100).optional(),
        hint: boundedHint(z.string().trim().min(1)).optional(),
        origin: z.enum(['snippet', 'file', 'paste']),
        /** The file name when origin is file (shown in the sightings list). */
        fileName: z.string().max(1000).optional(),
      })
      .strict(),
    output: z.object({ envId: z.number().int(), hash: z.string() }),
  }),
  'editor.fork': defineCall({
    name: 'editor.fork',
    summary: 'A new environment starting from a version (or the given edited source) of another one.',
    input: z.object({ envId: id, hash: hash.optional(), source: source.min(1).optional(), name: z.string().trim().min(1).max(200).optional() }).strict(),
    output: z.object({ envId: z.number().int(), hash: z.string() }),
  }),
  'editor.writeBackPreview': defineCall({
    name: 'editor.writeBackPreview',
    summary: 'What writing a version (default the head) back to the file it was imported from would change: the file now, the diff, the patch.',
    input: z.object({ envId: id, hash: hash.optional() }).strict(),
    output: writeBackPreviewSchema,
  }),
  'editor.writeBack': defineCall({
    name: 'editor.writeBack',
    summary: 'Write a version back to its source file, keeping the original beside it (.orig); refused when the file changed since the preview.',
    input: z.object({ envId: id, hash: hash.optional(), expectedFileHash: hash.nullable() }).strict(),
    output: writeBackPreviewSchema.extend({ written: z.boolean(), backupPath: z.string().nullable() }),
  }),
  'editor.checkSyntax': defineCall({
    name: 'editor.checkSyntax',
    summary: "Python's own parser over a source: the syntax error (if any) as a diagnostic.",
    input: z.object({ source }).strict(),
    output: z.object({ diagnostics: z.array(diagnosticSchema), parser: z.string() }),
  }),
  'editor.checkLoad': defineCall({
    name: 'editor.checkLoad',
    summary: "SPADE's quick loading checks (exec, class, instantiate, reset, step) in the sandboxed runtime.",
    input: z
      .object({
        source: source.min(1),
        /** Chosen by the caller: editor.checkLoadCancel with it stops these checks while they run. */
        requestId: z.string().regex(/^[\w.:-]{1,100}$/, { message: 'A request id is 1 to 100 letters, digits, dots, colons or dashes' }).optional(),
      })
      .strict(),
    output: loadCheckSchema,
  }),
  'editor.checkLoadCancel': defineCall({
    name: 'editor.checkLoadCancel',
    summary: 'Stop loading checks started with a requestId: their interpreter is stopped and editor.checkLoad fails with cancelled.',
    input: z.object({ requestId: z.string().regex(/^[\w.:-]{1,100}$/, { message: 'A request id is 1 to 100 letters, digits, dots, colons or dashes' }) }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
} as const;
