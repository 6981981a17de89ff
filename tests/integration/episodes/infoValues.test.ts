import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { addSource } from './fixtures';

/**
 * SPADE's wrapper keeps ints, floats, bools and None in `info` and drops strings
 * (docs/spade-formats.md section 2, code over prose): a game that reports `{"correct": True}` must
 * play, record (SQLite, JSONL) and replay through the real dispatcher's output validation, in both
 * runtimes.
 */
const GAME = String.raw`"""SPADE self-play generated game"""
import re

class FlagEnv:
    def __init__(self, max_turns=5):
        self.max_turns = max_turns
        self.turn = 0

    def reset(self, seed=None):
        self.turn = 0
        return "Say \\boxed{7}", {"ready": True, "note": None, "why": "text"}

    def step(self, action):
        self.turn += 1
        m = re.search(r"\\boxed\{([^}]*)\}", action)
        correct = bool(m) and m.group(1) == "7"
        info = {"correct": correct, "turn": self.turn, "missing": None, "label": "seen", "ratio": 0.5}
        return ("Right" if correct else "Wrong"), (1.0 if correct else 0.0), correct, False, info
`;

const tmp = tempDir('spade-info-values-');
let services: Services;
let api: Backend;
let hash: string;
beforeAll(() => {
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  hash = addSource(services.db, GAME, 'flag_env.py');
});
afterAll(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

describe.each(['pyodide', 'cpython'] as const)('booleans and None in info (%s)', (runtime) => {
  it('plays, records, exports, imports and replays', async () => {
    const opened = await api.call('episodes.open', { hash, seed: 1, runtime, label: `info ${runtime}` });
    expect(opened.episode.runtime).toBe(runtime);
    const id = opened.episode.id;
    const wrong = await api.call('episodes.act', { id, action: '\\boxed{3}' });
    expect(wrong.steps.at(-1)!.spade).toMatchObject({ terminated: false, info: { correct: false, turn: 1, missing: null, ratio: 0.5 } });
    // SPADE drops strings from info; the raw info keeps what the game returned.
    expect(wrong.steps.at(-1)!.spade!.info).not.toHaveProperty('label');
    expect(wrong.steps.at(-1)!.info).toMatchObject({ correct: false, label: 'seen' });
    const right = await api.call('episodes.act', { id, action: '\\boxed{7}' });
    expect(right.steps.at(-1)!.spade).toMatchObject({ terminated: true, reward: 1, info: { correct: true, turn: 2, missing: null } });

    const got = await api.call('episodes.get', { id });
    expect(got.steps.map((s) => s.spade?.info.correct ?? null)).toEqual([null, false, true]);
    const detail = await api.call('episodes.inspect', { id, idx: 2 });
    expect(detail.step.spade?.info).toMatchObject({ correct: true, missing: null });

    const rep = await api.call('episodes.replay', { id });
    expect(rep.divergence).toBeNull();

    const exported = await api.call('episodes.exportJsonl', { ids: [id] });
    expect(exported.count).toBe(1);
    const imported = await api.call('episodes.importJsonl', { text: exported.text });
    expect(imported.skipped).toEqual([]);
    const back = await api.call('episodes.get', { id: imported.ids[0]! });
    expect(back.steps.map((s) => s.spade?.info.correct ?? null)).toEqual([null, false, true]);
    const rep2 = await api.call('episodes.replay', { id: imported.ids[0]!, runtime });
    expect(rep2.divergence).toBeNull();
  });
});
