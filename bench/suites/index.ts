import type { BenchSuite } from '../types';
import { hostSuite } from './host';
import { memorySuite } from './memory';
import { runtimeSuite } from './runtime';
import { auditSuite } from './audit';

/** Every suite `npm run bench` knows, in the order it runs them. */
export const suites: BenchSuite[] = [hostSuite, memorySuite, runtimeSuite, auditSuite];
