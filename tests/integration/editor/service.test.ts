import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../core/errors';
import { forkSource } from '../../../core/editor/service';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';

const SRC = 'class ForkMeEnv:\n    def reset(self, seed=None):\n        return "hi", {}\n';

describe('editor service', () => {
  it('forks an unchanged source with a lineage comment, twice, and refuses a duplicate create', async () => {
    const tmp = tempDir('spade-editor-svc-');
    const s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    try {
      const a = s.editor.create({ source: SRC, origin: 'paste' });
      const f1 = s.editor.fork({ envId: a.envId });
      const f2 = s.editor.fork({ envId: a.envId });
      expect(new Set([a.hash, f1.hash, f2.hash]).size).toBe(3);
      const one = s.editor.open(f1.envId).env;
      expect(one.source).toContain(`# forked from ForkMeEnv (environment ${a.envId}, version ${a.hash.slice(0, 12)})`);
      expect(one.meta).toMatchObject({ forkedFrom: { envId: a.envId, hash: a.hash } });
      let err: unknown;
      try {
        s.editor.create({ source: SRC, origin: 'paste' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'conflict', details: { envId: a.envId } });
      expect(() => s.editor.versions(987654)).toThrow(/No environment/);
    } finally {
      await s.close();
      tmp.cleanup();
    }
  });

  it('gets its lifetime from Services: made once, closed with the app, not made again after', async () => {
    const tmp = tempDir('spade-editor-life-');
    const s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    const editor = s.editor;
    expect(s.editor).toBe(editor);
    expect((await editor.checkSyntax('x = (\n')).diagnostics.length).toBeGreaterThan(0);
    await s.close();
    expect(() => s.editor).toThrow(DomainError);
    tmp.cleanup();
  });

  it('leaves a new source alone and marks a taken one', () => {
    const taken = new Set([SRC]);
    expect(forkSource('other', { name: 'X', envId: 1, hash: 'a'.repeat(64) }, (t) => taken.has(t))).toBe('other');
    const once = forkSource(SRC, { name: 'X', envId: 1, hash: 'a'.repeat(64) }, (t) => taken.has(t));
    expect(once).toMatch(/# forked from X \(environment 1, version aaaaaaaaaaaa\)\n$/);
    taken.add(once);
    expect(forkSource(SRC, { name: 'X', envId: 1, hash: 'a'.repeat(64) }, (t) => taken.has(t), new Date('2026-01-02T03:04:05Z'))).toMatch(/# fork made 2026-01-02T03:04:05.000Z\n$/);
  });
});
