/**
 * A shell job whose launch script submits to a Ray head (SPADE's launch scripts): how the workbench
 * tells such a job, finds the Ray job it submitted, and looks at that Ray job.
 */
import type { JobRecord } from './types';

/** A shell job whose script submits to a Ray head (SPADE's launch scripts): spec.ray names that head. */
export function submitsToRay(job: JobRecord): boolean {
  return job.backend !== 'ray' && Boolean(job.spec.ray?.address);
}

/** The Ray job a launch script submitted, as the Ray backend sees it: reached through the job's SSH host unless local. */
export function rayView(job: JobRecord, submissionId: string, headHost: string | null = null): JobRecord {
  let address = job.spec.ray?.address;
  if (headHost && address) {
    // The script's head listens on the node it runs on: the loopback address the recipe names is that node's.
    const u = new URL(address);
    if (['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) {
      u.hostname = headHost;
      address = u.href.replace(/\/$/, '');
    }
  }
  return { ...job, backend: 'ray', externalId: submissionId, spec: { ...job.spec, backend: 'ray', ray: { ...job.spec.ray, address, tunnel: job.backend !== 'local' } } };
}

/** `ray job submit` says "Job 'X' submitted successfully"; SPADE's scripts under `set -x` also trace RAY_JOB_ID=X. */
export function submissionIdIn(text: string): string | null {
  const m = /Job '([A-Za-z0-9_.:-]{1,200})' submitted successfully/.exec(text) ?? /^\+ RAY_JOB_ID=([A-Za-z0-9_.:-]{1,200})$/m.exec(text);
  return m ? m[1]! : null;
}
