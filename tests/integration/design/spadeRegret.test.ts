// A design round's play measures SPADE's regret unless told otherwise: SPADE's counts (here set
// small), hinted seeds from the game's path, unhinted plays unseeded; the round's JSON, its game
// rows and the game's run record say which estimator made the number.
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { openDataDir } from '../../../core/memory/cliDb';
import { RunService } from '../../../core/runs/service';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { spadeGamePath } from '../../../core/episodes/estimator';
import { spadeHintSeeds } from '../../../core/episodes/spadeSeeds';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame } from '../../helpers/designGames';

const tmp = tempDir('spade-design-regret-');
afterAll(() => tmp.cleanup());
let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

type Msg = { role: string; content: string };

describe('design: regret by SPADE estimator by default', () => {
  it("plays SPADE's episodes and names the estimator in the JSON and the run record", async () => {
    server = await startStandIn((b) => {
      const m = b.messages as Msg[];
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'The number is lucky; answer as \\boxed{n}.' };
      if (String(b.model) === 'designer') return { content: `\`\`\`python\n${luckySevenGame('LuckyEnv')}\`\`\`` };
      return { content: m.find((x) => x.role === 'user')!.content.includes('HINT: ') ? '\\boxed{7}' : '\\boxed{3}' };
    });
    const data = join(tmp.dir, 'data');
    let out = '';
    let err = '';
    const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
    const code = await main(['design', '--skills', 'Logical Deduction', '--count', '1', '--designer', server.url, '--designer-model', 'designer', '--agent', server.url, '--agent-model', 'agent', '--attempts', '1', '--hint-plays', '3', '--nohint-plays', '2', '--max-turns', '4', '--seed', '5', '--data-dir', data, '--json'], io);
    expect(code, err).toBe(0);
    const j = JSON.parse(out) as { games: { accepted: boolean; regret: number | null; regret_estimator: string | null; run_id: string | null; win_rate: number | null }[] };
    const g = j.games[0]!;
    expect(g.accepted).toBe(true);
    expect(g.regret_estimator).toBe('spade');
    // Hinted plays win, unhinted ones never: regret 1 whichever estimator, counted over SPADE's plays.
    expect(g.regret).toBe(1);
    const { db } = openDataDir(data);
    try {
      const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => 1 });
      const v = runs.get(g.run_id!);
      expect(v.run.estimator).toBe('spade');
      const e = v.envs[0]!;
      const path = spadeGamePath(memoryCatalog(db).byHash(e.envHash), e.envHash);
      expect(e.episodes.filter((x) => x.hint).map((x) => x.seed).sort((a, b) => a - b)).toEqual(spadeHintSeeds(path, 3, 0).sort((a, b) => a - b));
      expect(e.episodes.filter((x) => !x.hint).map((x) => [x.seed, x.unseeded])).toEqual([
        [0, true],
        [1, true],
      ]);
    } finally {
      db.close();
    }
  }, 300_000);
});
