import { useEffect, useState } from 'react';
import { backend } from '../store/app';
import { attempt } from '../store/report';

/** The query language every selection field takes (core/memory/query.ts), said where it is typed. */
export const SELECTION_PLACEHOLDER = 'words, "a phrase", tag:, skill:, seed, verdict:, run:, hash: (empty: every environment)';

/**
 * How many environments a selection field's query picks now, or why it picks none: the count comes
 * from the same search the sweep will run, so `tag:audit-clean` shows its set before Start.
 */
export function SelectionMatches({ query, testId }: { query: string; testId: string }) {
  const [state, setState] = useState<{ n: number; capped: boolean } | { error: string } | null>(null);
  useEffect(() => {
    let alive = true;
    const t = setTimeout(() => {
      void attempt('runs', 'Count the selection', () => backend().call('memory.search', { query: query.trim(), limit: 1 }), {
        current: () => alive,
        show: (error) => setState({ error }),
      }).then((r) => r && alive && setState({ n: r.total, capped: r.capped }));
    }, 250);
    return () => {
      alive = false;
      clearTimeout(t);
    };
  }, [query]);
  if (!state) return null;
  if ('error' in state)
    return (
      <span className="selection-matches bad" data-testid={testId} role="alert">
        {state.error}
      </span>
    );
  return (
    <span className="selection-matches muted" data-testid={testId}>
      {state.n.toLocaleString()}
      {state.capped ? '+' : ''} environment{state.n === 1 ? '' : 's'} match
    </span>
  );
}
