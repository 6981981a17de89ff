import type { BenchSuite } from '../types';
import { hostSuite } from './host';
import { hostLoopSuite } from './hostLoop';
import { memorySuite } from './memory';
import { runtimeSuite } from './runtime';
import { auditSuite } from './audit';
import { isolationSuite } from './isolation';
import { dispatchSuite } from './dispatch';
import { jobsSuite } from './jobs';
import { episodesSuite } from './episodes';
import { editorSuite } from './editor';
import { loadSuite } from './load';
import { policySuite } from './policy';
import { cliSuite } from './cli';
import { modelSuite } from './model';
import { designSuite } from './design';
import { serveEnvSuite } from './serveEnv';
import { trainSuite } from './train';

/** Every suite `npm run bench` knows, in the order it runs them. */
export const suites: BenchSuite[] = [hostSuite, hostLoopSuite, memorySuite, runtimeSuite, auditSuite, isolationSuite, dispatchSuite, jobsSuite, episodesSuite, editorSuite, policySuite, cliSuite, modelSuite, designSuite, serveEnvSuite, trainSuite, loadSuite];
