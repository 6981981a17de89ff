import { backend } from '../store/app';
import { attempt } from '../store/report';
import { useWorkbench } from '../store/workbench';
import { Visible } from './Visible';

/** Names that more than one row of a list carries (two environments may share a class name). */
export function sameNames(names: readonly (string | null)[]): Set<string> {
  const n = new Map<string, number>();
  for (const x of names) if (x !== null) n.set(x, (n.get(x) ?? 0) + 1);
  return new Set([...n].filter(([, c]) => c > 1).map(([k]) => k));
}

/** Opens the library page of the environment that holds a version (its source, its hint, its audit). */
export async function openVersion(hash: string, name: string): Promise<void> {
  const env = await attempt('library', 'Open the environment', () => backend().call('memory.get', { hash }));
  if (env) useWorkbench.getState().openTab({ kind: 'environment', envId: env.id }, env.name || name);
}

/**
 * An environment version in a list of results: its name and its short hash, which opens its source.
 * Two games with the same class name are two rows that say which is which (`twin` marks the hash).
 */
export function VersionName({ name, hash, twin = false }: { name: string; hash: string; twin?: boolean }) {
  return (
    <span className="version-name">
      <Visible text={name} />{' '}
      <button
        className={`version-hash mono ${twin ? 'twin' : ''}`}
        title={`Version ${hash}: open its environment and source${twin ? ' (another environment here has the same name)' : ''}`}
        data-testid="env-version"
        data-hash={hash}
        onClick={(e) => {
          e.stopPropagation();
          void openVersion(hash, name);
        }}
      >
        {hash.slice(0, 8)}
      </button>
    </span>
  );
}
