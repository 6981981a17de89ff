import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { sha256 } from '../../../core/memory/parse';
import { tempDir } from '../../helpers/tmp';

const GAME = readFileSync('resources/seed-pack/games/game_00000_001_pattern_recognition.py', 'utf8');

let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;

async function rejects(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected the call to be refused');
}

beforeEach(() => {
  tmp = tempDir('spade-editor-');
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
});
afterEach(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

describe('editor handlers on a real SQLite file', () => {
  it('creates an environment, keeps drafts, saves a child version and diffs it', async () => {
    const { envId, hash } = await api.call('editor.create', { source: GAME, origin: 'paste', hint: 'Look at differences.' });
    expect(hash).toBe(sha256(GAME));
    const opened = await api.call('editor.open', { envId });
    expect(opened.env.name).toBe('SequencePatternEnv');
    expect(opened.env.hint).toBe('Look at differences.');
    expect(opened.draft).toBeNull();

    const edited = GAME.replace('max_turns=3', 'max_turns=4');
    await api.call('editor.draftSave', { envId, baseHash: hash, source: edited, hint: 'Look at the gaps.' });
    // A reopened database (a killed app) still has the draft.
    api.close();
    await services.close();
    services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
    const again = await api.call('editor.open', { envId });
    expect(again.draft).toMatchObject({ baseHash: hash, source: edited, hint: 'Look at the gaps.' });
    expect((await api.call('editor.drafts', {})).map((d) => d.envId)).toEqual([envId]);

    const diffDraft = await api.call('editor.diff', { left: { hash }, right: { draft: envId } });
    expect(diffDraft.left.source).toBe(GAME);
    expect(diffDraft.right).toEqual({ label: 'unsaved draft', source: edited });

    const saved = await api.call('editor.save', { envId, parentHash: hash, source: edited, hint: 'Look at the gaps.', message: 'four turns', check: false });
    expect(saved.created).toBe(true);
    expect(saved.hash).toBe(sha256(edited));
    const child = saved.versions.find((v) => v.hash === saved.hash)!;
    expect(child).toMatchObject({ parentHash: hash, message: 'four turns' });
    expect(saved.versions.map((v) => v.hash)).toContain(hash);
    expect((await api.call('editor.open', { envId })).draft).toBeNull();
    expect((await api.call('editor.open', { envId })).env.hint).toBe('Look at the gaps.');
    expect(await api.call('editor.drafts', {})).toEqual([]);

    const diff = await api.call('editor.diff', { left: { hash }, right: { hash: saved.hash } });
    expect(diff.right.label).toContain('four turns');
    expect(diff.right.source).toBe(edited);

    // Revert moves the head back; nothing is deleted.
    const reverted = await api.call('editor.revert', { envId, hash });
    expect(reverted.versions).toHaveLength(2);
    const v = await api.call('editor.versions', { envId });
    expect(v.head).toBe(hash);
  });

  it('refuses bad input and loses nothing', async () => {
    const { envId, hash } = await api.call('editor.create', { source: GAME, origin: 'snippet' });
    await api.call('editor.draftSave', { envId, baseHash: hash, source: 'draft text', hint: null });
    expect((await rejects(api.call('editor.create', { source: GAME, origin: 'paste' }))).code).toBe('conflict');
    expect((await rejects(api.call('editor.draftSave', { envId: 999, baseHash: hash, source: 'x', hint: null }))).code).toBe('not_found');
    expect((await rejects(api.call('editor.save', { envId, parentHash: 'f'.repeat(64), source: 'x = 1\n', hint: null, message: '' }))).code).toBe('invalid_input');
    expect((await rejects(api.call('editor.save', { envId, parentHash: hash, source: '', hint: null, message: '' }))).code).toBe('invalid_input');
    expect((await rejects(api.call('editor.diff', { left: { hash }, right: { draft: 999 } }))).code).toBe('not_found');
    expect((await rejects(api.call('editor.revert', { envId, hash: 'a'.repeat(64) }))).code).toBe('not_found');
    // A save whose text is another environment's refuses and keeps the draft.
    const other = await api.call('editor.create', { source: 'class OtherEnv:\n    pass\n', origin: 'paste' });
    expect((await rejects(api.call('editor.save', { envId, parentHash: hash, source: 'class OtherEnv:\n    pass\n', hint: null, message: '', check: false }))).code).toBe('conflict');
    expect((await api.call('editor.open', { envId })).draft?.source).toBe('draft text');
    expect(other.envId).not.toBe(envId);
  });

  it('forks into a new environment with its own lineage and the same curation', async () => {
    const { envId, hash } = await api.call('editor.create', { source: GAME, origin: 'file', fileName: 'seq.py', skill: 'Pattern Recognition', hint: 'h' });
    const fork = await api.call('editor.fork', { envId });
    expect(fork.envId).not.toBe(envId);
    const f = await api.call('editor.open', { envId: fork.envId });
    expect(f.env.source.startsWith(GAME)).toBe(true);
    expect(f.env.source).toContain(`# forked from SequencePatternEnv (environment ${envId}, version ${hash.slice(0, 12)})`);
    expect(f.env).toMatchObject({ skill: 'Pattern Recognition', hint: 'h', kind: 'game' });
    expect(f.env.versions[0]!.message).toContain(`forked from environment ${envId}`);
    const second = await api.call('editor.fork', { envId });
    expect(second.envId).not.toBe(fork.envId);
    const edited = await api.call('editor.fork', { envId, source: GAME.replace('six terms', 'six numbers') });
    expect((await api.call('editor.open', { envId: edited.envId })).env.source).toBe(GAME.replace('six terms', 'six numbers'));
  });

  it("reports syntax errors from Python's own parser with a Monaco range", async () => {
    const ok = await api.call('editor.checkSyntax', { source: GAME });
    expect(ok.diagnostics).toEqual([]);
    expect(ok.parser).toMatch(/CPython 3\./);
    const bad = await api.call('editor.checkSyntax', { source: 'class AEnv:\n    def reset(self:\n        return 1\n' });
    expect(bad.diagnostics).toHaveLength(1);
    expect(bad.diagnostics[0]).toMatchObject({ severity: 'error', source: 'python-syntax', line: 2 });
    expect(bad.diagnostics[0]!.message).toMatch(/SyntaxError/);
    const indent = await api.call('editor.checkSyntax', { source: 'def f():\nreturn 1\n' });
    expect(indent.diagnostics[0]).toMatchObject({ line: 2 });
    expect(indent.diagnostics[0]!.message).toMatch(/IndentationError/);
    const nul = await api.call('editor.checkSyntax', { source: 'x = 1\0\n' });
    expect(nul.diagnostics).toHaveLength(1);
    // The checker survives a pathological source and keeps answering.
    await api.call('editor.checkSyntax', { source: `${'('.repeat(5000)}${')'.repeat(5000)}` });
    expect((await api.call('editor.checkSyntax', { source: 'x = (\n' })).diagnostics).toHaveLength(1);
  });
});
