import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';

const GAME = readFileSync('resources/seed-pack/games/game_00000_001_pattern_recognition.py', 'utf8');

let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;
beforeAll(() => {
  tmp = tempDir('spade-editor-load-');
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
});
afterAll(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

describe("SPADE's quick loading checks in the sandboxed runtime", () => {
  it('passes a seed-pack game', async () => {
    const r = await api.call('editor.checkLoad', { source: GAME });
    expect(r).toMatchObject({ ran: true, ok: true, diagnostics: [] });
  });

  it('points a failing step at the line that raised', async () => {
    const src = GAME.replace('        self.turn += 1\n', '        self.turn += 1\n        raise ValueError("boom")\n');
    const r = await api.call('editor.checkLoad', { source: src });
    expect(r.ok).toBe(false);
    const d = r.diagnostics[0]!;
    expect(d).toMatchObject({ stage: 'step', source: 'spade-load', severity: 'error' });
    expect(d.message).toMatch(/Game step\(\) failed on action 1.*boom/);
    expect(src.split('\n')[d.line - 1]).toContain('raise ValueError("boom")');
  });

  it('reports numpy-free type problems, a missing class and a reset that breaks', async () => {
    const badReward = GAME.replace('return "The game is over.", 0.0, True, False, {}', 'return "The game is over.", 0.0, True, False, {}').replace(
      'left = self.max_turns - self.turn',
      'left = self.max_turns - self.turn\n        return obs, "0.0", False, False, {}',
    );
    const r1 = await api.call('editor.checkLoad', { source: badReward });
    expect(r1.ok).toBe(false);
    // SPADE's own words, from the audit's spade.step check
    expect(r1.diagnostics[0]!.message).toMatch(/step\(\) reward must be numeric, got <class 'str'>/);

    const r2 = await api.call('editor.checkLoad', { source: 'class Helper:\n    pass\n' });
    expect(r2).toMatchObject({ ran: true, ok: false });
    expect(r2.diagnostics[0]!.message).toMatch(/No valid game class/);

    const r3 = await api.call('editor.checkLoad', { source: GAME.replace('        self.turn = 0\n        self.done = False\n        self.shown', '        self.turn = 0\n        self.done = False\n        1 / 0\n        self.shown') });
    expect(r3.diagnostics[0]).toMatchObject({ stage: 'reset' });
    expect(r3.diagnostics[0]!.message).toMatch(/Game reset\(\) failed.*division/);
  });

  it('runs on save and reports through the save result', async () => {
    const { envId, hash } = await api.call('editor.create', { source: `${GAME}\n# saved copy\n`, origin: 'paste' });
    const broken = `${GAME}\n# saved copy\nraise RuntimeError("at import")\n`;
    const saved = await api.call('editor.save', { envId, parentHash: hash, source: broken, hint: null, message: 'break it' });
    expect(saved.created).toBe(true);
    expect(saved.check.ok).toBe(false);
    expect(saved.check.diagnostics[0]!.stage).toBe('exec');
    expect(saved.check.diagnostics[0]!.line).toBe(broken.split('\n').findIndex((l) => l.startsWith('raise RuntimeError')) + 1);
  });

  it('a Save whose checks are cancelled keeps the version and says the checks did not run', async () => {
    const { envId, hash } = await api.call('editor.create', { source: `${GAME}\n# cancelled copy\n`, origin: 'paste' });
    const spins = `${GAME}\n# cancelled copy\nwhile True:\n    pass\n`;
    const saving = api.call('editor.save', { envId, parentHash: hash, source: spins, hint: null, message: 'spins', requestId: 'save-checks-1' });
    // What the engine holds (read for the assertion only): the save's checks are running.
    const audit = services.audit as unknown as { auditsInFlight: number };
    await expect.poll(() => audit.auditsInFlight, { timeout: 30_000, interval: 50 }).toBe(1);
    expect(await api.call('editor.checkLoadCancel', { requestId: 'save-checks-1' })).toEqual({ cancelled: true });
    const saved = await saving;
    expect(audit.auditsInFlight).toBe(0);
    expect(saved.created).toBe(true);
    expect(saved.check).toMatchObject({ ran: false, ok: false, diagnostics: [] });
    expect(saved.check.detail).toContain('Cancelled');
    expect((await api.call('editor.versions', { envId })).head).toBe(saved.hash);
  });
});
