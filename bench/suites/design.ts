import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AuditPool } from '../../core/audit/pool';
import { ChatClient } from '../../core/models/client';
import { designGame } from '../../core/design/attempt';
import { startStandIn } from '../../tests/helpers/standInOpenAi';
import { median, type BenchRow, type BenchSuite } from '../types';

const GAMES = 10;

const GAME = `import random
class HalvingEnv:
    def __init__(self, max_turns=12):
        self.max_turns = max_turns
        self.secret = 0
        self.t = 0
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.secret = random.randint(1, 1000)
        self.t = 0
        return "Find my number in 1-1000 as \\\\boxed{n}.", {}
    def step(self, action):
        self.t += 1
        import re
        m = re.search(r"\\\\boxed\\{(\\d{1,6})\\}", action)
        g = int(m.group(1)) if m else None
        if g == self.secret:
            return "Correct!", 1.0, True, False, {}
        done = self.t >= self.max_turns
        if g is None:
            return "Answer as \\\\boxed{n}.", 0.0, False, done, {}
        return ("higher" if g < self.secret else "lower"), 0.0, False, done, {}
    def solution(self):
        return str(self.secret)
`;

/**
 * What a design attempt costs besides the model's own generation: prompt building, the seed draw,
 * taking the program out of the answer, SPADE's load checks, its random-guess test and the
 * workbench's audit (native CPython in bubblewrap), the hint request round trip. A scripted designer
 * (the stand-in server, answering at once) writes the same accepted game every time.
 */
export const designSuite: BenchSuite = {
  prefix: 'design',
  async run(log) {
    const server = await startStandIn((b) =>
      (b.messages as { role: string }[])[0]!.role === 'system' ? { content: 'Halve the range.' } : { content: `\`\`\`python\n${GAME}\`\`\`` },
    );
    const pool = new AuditPool({ workers: 1, envTimeoutSec: 60 });
    const template = readFileSync(join(process.cwd(), 'resources', 'design', 'designer.txt'), 'utf8');
    const client = new ChatClient({ baseUrl: server.url, model: 'designer', apiKey: null, temperature: 0, topP: 1, topK: null, maxTokens: 4096, thinking: null, turnTimeoutMs: 30_000, retries: 0, concurrency: 1, stream: false });
    try {
      const overhead: number[] = [];
      for (let i = 0; i < GAMES + 1; i++) {
        let modelMs = 0;
        const timed = { complete: async (...a: Parameters<ChatClient['complete']>) => {
          const c = await client.complete(...a);
          modelMs += c.latencyMs;
          return c;
        } };
        const t0 = performance.now();
        const g = await designGame({ skill: 'Logical Deduction', difficulty: 'medium', maxTurns: 12, template, memory: [], attempts: 1, feedback: 'repair', seed: i, acceptance: { gate: 'workbench', resetGate: false, envValidator: false, maxTurns: 12 } }, { designer: timed, check: (code, extra) => pool.audit(code, { maxTurns: 12, ...extra }) });
        if (!g.accepted) throw new Error(`the bench game was rejected: ${g.attempts[0]?.rejectedBecause}`);
        if (i > 0) overhead.push(performance.now() - t0 - modelMs);
      }
      log(`attempt overhead: ${overhead.map((x) => x.toFixed(0)).join(', ')} ms`);
      return [{ id: 'design.attempt_overhead_ms', value: median(overhead), unit: 'ms', note: `median of ${GAMES} accepted attempts, scripted designer; the audit is most of it` } satisfies BenchRow];
    } finally {
      await pool.close();
      await server.close();
    }
  },
};
