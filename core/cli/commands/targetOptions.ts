import { UsageError } from '../command';
import { probePython } from '../../runtime/native';
import { parseTarget, type DispatchSettings, type SweepTarget } from '../../sweeps/targets';

/**
 * The options of every command that can send its work to a cluster (`audit --pool`, `regret`,
 * `design`): where (`--on`), the interpreter the nodes sandbox games with, and how the head or the
 * submit host is reached. One definition, so the three read them and explain them the same way.
 */
export const TARGET_OPTIONS = {
  on: { type: 'string' },
  python: { type: 'string' },
  'ray-python': { type: 'string' },
  'ssh-key': { type: 'string' },
  'known-hosts': { type: 'string' },
} as const;

interface TargetValues {
  on?: string | undefined;
  python?: string | undefined;
  'ray-python'?: string | undefined;
  'ssh-key'?: string | undefined;
  'known-hosts'?: string | undefined;
}

export function cliTarget(on: string | undefined): SweepTarget {
  try {
    return parseTarget(on);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/**
 * The interpreter named for the nodes: `--python`, else this machine's native one (right for a
 * cluster on this machine or one sharing its venv); '' where no node needs one.
 */
export function nodePython(values: TargetValues, needed: boolean): string {
  if (values.python !== undefined) return values.python;
  if (!needed) return '';
  const found = probePython()?.path;
  if (found === undefined) throw new UsageError('No interpreter for native runs here to name for the nodes: give --python PATH (the interpreter on the cluster)');
  return found;
}

/** How the head (Ray) or the submit host (Slurm) is reached, as the options gave it. */
export function reachSettings(values: TargetValues): Pick<DispatchSettings, 'rayPython' | 'sshKey' | 'knownHosts'> {
  return { rayPython: values['ray-python'], sshKey: values['ssh-key'], knownHosts: values['known-hosts'] };
}
