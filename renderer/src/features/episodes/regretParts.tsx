import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { EventPayload } from '../../../../core/api';
import { backend } from '../../store/app';
import { useCall } from '../../store/useCall';

/** Hint-regret runs (RegretView: a policy; LlmView: a served model) share their numbers, progress and rows. */

/** A number to three places; null (not measured) as a dash. */
export const fmt = (x: number | null) => (x === null ? '–' : (Math.round(x * 1000) / 1000).toString());

export const newRunId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

type Progress = EventPayload<'episodes.regretProgress'>;

/**
 * One regret run at a time (useCall's busy and error line): its id while it runs (null when none)
 * and the progress the engine reports for it. `play(id, fn)` runs fn as run `id`.
 */
export function useRegretRun() {
  const runId = useRef<string | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const { busy, error, setError, run } = useCall('episodes');
  useEffect(
    () =>
      backend().on('episodes.regretProgress', (p) => {
        if (p.runId === runId.current) setProgress(p);
      }),
    [],
  );
  const play = async (id: string, fn: () => Promise<void>): Promise<void> => {
    runId.current = id;
    try {
      await run('Regret run', fn);
    } finally {
      runId.current = null;
      setProgress(null);
    }
  };
  return { runId, progress, setProgress, busy: busy !== null, error, setError, play };
}

export function RunProgress({ progress, testId, before = '' }: { progress: Progress; testId: string; before?: string }) {
  return (
    <div className="ep-regret-progress" data-testid={testId}>
      <progress max={progress.total} value={progress.done} />
      <span>
        {before}
        {progress.done} / {progress.total} episodes{progress.etaSec !== null ? ` · about ${Math.ceil(progress.etaSec)} s left` : ''}
      </span>
    </div>
  );
}

/** The seeds to play: how many, from which. */
export function SeedRange(props: { seeds: number; setSeeds: (n: number) => void; start: number; setStart: (n: number) => void; max?: number; testId: string }) {
  return (
    <>
      <label>
        seeds <input type="number" min={1} max={props.max} value={props.seeds} onChange={(e) => props.setSeeds(Number(e.target.value))} style={{ width: 60 }} data-testid={props.testId} />
      </label>
      <label>
        from <input type="number" min={0} value={props.start} onChange={(e) => props.setStart(Number(e.target.value))} style={{ width: 60 }} />
      </label>
    </>
  );
}

/** The regret line of a result table; `children` are the cells after the value. */
export function RegretRow({ value, testId, children }: { value: number | null; testId: string; children: ReactNode }) {
  return (
    <tr>
      <td>
        <b>regret</b>
      </td>
      <td data-testid={testId}>
        <b>{value === null ? 'not measured' : fmt(value)}</b>
      </td>
      {children}
    </tr>
  );
}
