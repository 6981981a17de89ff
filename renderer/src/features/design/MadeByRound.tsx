import { useEffect, useState } from 'react';
import type { EnvDetail } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { openEnvironment } from '../library/open';
import { openDesign } from './open';

interface DesignMeta {
  round: string;
  seq: number;
  game: number;
  attempt: number;
  parents: number[];
  designer: string;
}

/** The design round a game came from (kept under meta.design when it was accepted), or null. */
export function designMetaOf(meta: Record<string, unknown>): DesignMeta | null {
  const d = meta.design as Partial<DesignMeta> | undefined;
  if (!d || typeof d !== 'object' || typeof d.round !== 'string' || typeof d.seq !== 'number') return null;
  return { round: d.round, seq: d.seq, game: Number(d.game ?? 0), attempt: Number(d.attempt ?? 1), parents: Array.isArray(d.parents) ? d.parents.filter((p): p is number => typeof p === 'number') : [], designer: String(d.designer ?? '') };
}

/** "Made by design round N" and the seeds it was shown (its parents), each opening its page. */
export function MadeByRound({ env }: { env: EnvDetail }) {
  const d = designMetaOf(env.meta);
  const [names, setNames] = useState<Record<number, string>>({});
  const key = d?.parents.join(',') ?? '';
  useEffect(() => {
    let alive = true;
    for (const id of d?.parents ?? [])
      // A name that cannot be read leaves the id shown.
      void attempt('design', 'Parent name', () => backend().call('memory.get', { id }), { quiet: 'warn' }).then((e) => e && alive && setNames((n) => ({ ...n, [id]: e.name })));
    return () => {
      alive = false;
    };
  }, [key]);
  if (!d) return null;
  return (
    <div className="env-made-by" data-testid="env-made-by-round">
      <div>
        Made by{' '}
        <button className="link" onClick={() => openDesign(d.round)}>
          design round {d.seq}
        </button>{' '}
        (game {d.game + 1}, attempt {d.attempt}{d.designer ? `, ${d.designer}` : ''})
      </div>
      {d.parents.length ? (
        d.parents.map((id) => (
          <div key={id} data-testid="env-design-parent">
            from{' '}
            {names[id] !== undefined ? (
              <button className="link" onClick={() => openEnvironment(id, names[id]!)}>
                {names[id]}
              </button>
            ) : (
              <span title="no longer in this library">environment #{id}</span>
            )}
          </div>
        ))
      ) : (
        <div className="muted">no seed was shown (memory had none for its skill)</div>
      )}
    </div>
  );
}
