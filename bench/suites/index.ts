import type { BenchSuite } from '../types';
import { hostSuite } from './host';
import { memorySuite } from './memory';

/** Every suite `npm run bench` knows, in the order it runs them. */
export const suites: BenchSuite[] = [hostSuite, memorySuite];
