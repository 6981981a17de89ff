import { shQuote } from '../shell';
import { APPS_QUERY, cleanText, GPU_QUERY, LIMITS } from './nvidiaSmi';

/**
 * The shell that samples a node's GPUs, run over the job's own connection. Every line it prints
 * is `SPADEGPU<TAB>tag<TAB>host<TAB>payload`, so a login banner, srun's own messages or several
 * nodes' lines mixed on one stream are told apart:
 *   step    the Slurm step it runs as (JOBID.STEPID), so the workbench can end it when it stops sampling
 *   nogpu   no GPU seen (no nvidia-smi on PATH, or it printed no GPU row), with why; then it exits
 *   start   sampling began (payload: the interval in seconds)
 *   gpu     one `--query-gpu` line, as `nvidia-smi ... -l N` prints it each interval
 *   apps / app... / appsend   one `--query-compute-apps` answer: which processes hold which GPU
 *   end     the job's process is gone: sampling stops by itself
 */
export const TAG = 'SPADEGPU';

export interface NodeScriptOptions {
  intervalS: number;
  /** A process (group leader) whose end ends the sampling: the job's pid on a shell backend. */
  watchPid?: number | null;
  /** The job's own PATH, when its variables set one: nvidia-smi is looked up as the job would. */
  path?: string | null;
}

export function nodeScript(o: NodeScriptOptions): string {
  const n = Math.max(1, Math.min(3600, Math.round(o.intervalS)));
  const q = `--query-gpu=${GPU_QUERY.join(',')} --format=csv,noheader,nounits`;
  const a = `--query-compute-apps=${APPS_QUERY.join(',')} --format=csv,noheader,nounits`;
  const pid = o.watchPid && Number.isInteger(o.watchPid) && o.watchPid > 1 ? o.watchPid : null;
  return [
    o.path ? `PATH=${shQuote(o.path)}; export PATH` : '',
    `h=$(hostname -s 2>/dev/null || hostname 2>/dev/null || echo node)`,
    `say() { printf '${TAG}\\t%s\\t%s\\t%s\\n' "$1" "$h" "$2"; }`,
    // A Slurm step outlives the SSH channel that started it: the workbench cancels it by this id.
    `if [ -n "$SLURM_STEP_ID" ]; then say step "$SLURM_JOB_ID.$SLURM_STEP_ID"; fi`,
    `if ! command -v nvidia-smi >/dev/null 2>&1; then say nogpu "nvidia-smi is not on this node's PATH"; exit 0; fi`,
    `first=$(nvidia-smi ${q} 2>&1); rc=$?`,
    // nvidia-smi exits 6 ("No devices were found") or 9 (no driver) where there is no GPU to read.
    `if [ "$rc" -ne 0 ] || ! printf '%s\\n' "$first" | grep -q '^ *[0-9]'; then say nogpu "nvidia-smi exited $rc and listed no GPU: $(printf '%s' "$first" | head -c 300 | tr '\\n\\t' '  ')"; exit 0; fi`,
    `say start ${n}`,
    `nvidia-smi ${q} -l ${n} 2>&1 | while IFS= read -r l; do say gpu "$l"; done &`,
    `bg=$!`,
    `while :; do`,
    pid ? `  if ! kill -0 ${pid} 2>/dev/null; then say end "the job's process ${pid} ended"; break; fi` : '',
    `  apps=$(nvidia-smi ${a} 2>&1)`,
    `  say apps ""`,
    `  printf '%s\\n' "$apps" | while IFS= read -r l; do [ -n "$l" ] && say app "$l"; done`,
    `  say appsend ""`,
    `  sleep ${n}`,
    `done`,
    // The -l reader ends here; nvidia-smi itself at its next write, into the closed pipe.
    `kill "$bg" 2>/dev/null`,
    `exit 0`,
  ]
    .filter(Boolean)
    .join('\n');
}

export type NodeLine =
  | { tag: 'step' | 'nogpu' | 'start' | 'gpu' | 'app' | 'end'; host: string; payload: string }
  | { tag: 'apps' | 'appsend'; host: string; payload: string };

const TAGS = new Set(['step', 'nogpu', 'start', 'gpu', 'apps', 'app', 'appsend', 'end']);

/** One line of the stream, or null when it is not the script's (a banner, srun's own words). */
export function readNodeLine(line: string): NodeLine | null {
  if (line.length > LIMITS.line + 300 || !line.startsWith(`${TAG}\t`)) return null;
  const [, tag, host, ...rest] = line.split('\t');
  if (!tag || !TAGS.has(tag) || host === undefined) return null;
  const node = cleanText(host, LIMITS.nodeName);
  if (!node) return null;
  return { tag: tag as NodeLine['tag'], host: node, payload: rest.join('\t') };
}
