import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { tempDir } from '../../helpers/tmp';
import { makeManager, waitFor } from './helpers';

/**
 * The app and the CLI (`jobs logs --follow`, `jobs launch --follow`) may follow one job at once,
 * each with its own connection to the same SQLite file. Both read the log from the offset they
 * last saw; only one may put those bytes into the mirror.
 */
describe('two processes following one job', () => {
  it('mirror every line of its log once, in order, however their polls interleave', async () => {
    const tmp = tempDir('spade-jobs-two-');
    // Two managers on two connections to one database file, as two processes have; neither polls on its own.
    const a = makeManager(tmp.dir, { pollMs: 3_600_000 });
    const b = makeManager(tmp.dir, { pollMs: 3_600_000 });
    try {
      const script = 'i=1; while [ $i -le 120 ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done';
      const job = await a.manager.submit(buildSpec({ name: 'numbered', backend: 'local', command: ['sh', '-c', script], workdir: join(tmp.dir, 'work'), poolDir: null }));
      // Both ask at the same moments, so each reads from the offset the other is about to take.
      await waitFor('the job to end in both', async () => {
        await Promise.all([a.manager.poll(job.id), b.manager.poll(job.id)]);
        return ['succeeded', 'failed', 'lost'].includes(a.manager.get(job.id).state) && ['succeeded', 'failed', 'lost'].includes(b.manager.get(job.id).state);
      });
      const lines = a.manager.readLog(job.id, 0, 1 << 20).text.split('\n').filter(Boolean);
      expect(lines).toEqual(Array.from({ length: 120 }, (_, i) => `line ${i + 1}`));
      expect(a.manager.get(job.id).localLogSize).toBe(lines.join('\n').length + 1);
    } finally {
      await a.manager.close();
      await b.manager.close();
      a.db.close();
      b.db.close();
      tmp.cleanup();
    }
  });
});
