import { DEFAULT_LOCAL_MODEL, resolveLocalModel } from '../../core/models/localModel';
import { LocalEngine, defaultLocalOptions } from '../../core/models/localEngine';
import { median, type BenchRow, type BenchSuite } from '../types';

const ANSWERS = 5;
const TOKENS = 64;

/**
 * The embedded model's speed on this machine: 64-token answers (prompt evaluation included) from
 * SmolLM2-135M-Instruct, the median of five after one warm-up, with the workbench's thread count
 * (the machine's cores) and with node-llama-cpp's own default of max(cores, 4), which on two cores
 * puts four spinning threads on two cores: the reason a first try here was slow.
 */
export const modelSuite: BenchSuite = {
  prefix: 'model',
  async run(log) {
    let modelPath: string;
    try {
      modelPath = resolveLocalModel(DEFAULT_LOCAL_MODEL.name);
    } catch (e) {
      log(`skipped: ${(e as Error).message}`);
      return [];
    }
    const base = defaultLocalOptions(modelPath);
    const measure = async (threads: number): Promise<{ tps: number; loadMs: number }> => {
      const engine = LocalEngine.for({ ...base, threads });
      const info = await engine.ready;
      const one = async () => {
        const c = await engine.complete({
          messages: [{ role: 'user', content: 'Count from 1 to 500, separated by commas.' }],
          maxTokens: TOKENS,
          temperature: 0,
          topP: 1,
          topK: null,
          seed: 1,
        });
        return (c.usage.completion_tokens / c.generationMs) * 1000;
      };
      await one();
      const xs: number[] = [];
      for (let i = 0; i < ANSWERS; i++) xs.push(await one());
      await engine.close();
      log(`threads ${info.threads}: ${xs.map((x) => x.toFixed(1)).join(', ')} tokens/s (load ${info.loadMs.toFixed(0)} ms, ${info.build} ${info.gpu ?? 'cpu'})`);
      return { tps: median(xs), loadMs: info.loadMs };
    };
    const ours = await measure(base.threads);
    const theirs = await measure(Math.max(base.threads, 4));
    return [
      { id: 'model.local_tokens_per_s', value: ours.tps, unit: 'tokens/s', note: `SmolLM2-135M Q4_1, ${TOKENS}-token answers, ${base.threads} threads, median of ${ANSWERS}; model load ${ours.loadMs.toFixed(0)} ms` },
      { id: 'model.local_tokens_per_s_default_threads', value: theirs.tps, unit: 'tokens/s', note: `node-llama-cpp's default thread count, max(cores, 4) = ${Math.max(base.threads, 4)}` },
    ];
  },
};
