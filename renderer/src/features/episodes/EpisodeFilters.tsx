import { useEpisodes, type EpisodeFilters } from './store';

const OUTCOMES: { value: NonNullable<EpisodeFilters['outcome']>; label: string }[] = [
  { value: 'won', label: 'won' },
  { value: 'lost', label: 'lost' },
  { value: 'truncated', label: 'truncated' },
  { value: 'unfinished', label: 'unfinished' },
];

/** The recorded list's filters: environment, policy, hint, outcome and the days recorded. */
export function EpisodeFiltersBar() {
  const filters = useEpisodes((s) => s.filters);
  const facets = useEpisodes((s) => s.facets);
  const setFilters = useEpisodes((s) => s.setFilters);
  const change = (patch: Partial<EpisodeFilters>) => void setFilters({ ...filters, ...patch });
  const active = Object.keys(filters).length > 0;
  return (
    <div className="ep-filters" data-testid="ep-filters">
      <select aria-label="Filter by environment" data-testid="ep-filter-env" value={filters.envName ?? ''} onChange={(e) => change({ envName: e.target.value || undefined })}>
        <option value="">all environments</option>
        {facets.envNames.map((f) => (
          <option key={f.value} value={f.value}>
            {f.value} ({f.count})
          </option>
        ))}
      </select>
      <select aria-label="Filter by policy" data-testid="ep-filter-policy" value={filters.policy ?? ''} onChange={(e) => change({ policy: e.target.value || undefined })}>
        <option value="">any policy</option>
        {facets.policies.map((f) => (
          <option key={f.value} value={f.value}>
            {f.value} ({f.count})
          </option>
        ))}
      </select>
      <select
        aria-label="Filter by hint"
        data-testid="ep-filter-hint"
        value={filters.hint === undefined ? '' : filters.hint ? 'on' : 'off'}
        onChange={(e) => change({ hint: e.target.value === '' ? undefined : e.target.value === 'on' })}
      >
        <option value="">hint on or off</option>
        <option value="on">with hint</option>
        <option value="off">without hint</option>
      </select>
      <select aria-label="Filter by outcome" data-testid="ep-filter-outcome" value={filters.outcome ?? ''} onChange={(e) => change({ outcome: (e.target.value || undefined) as EpisodeFilters['outcome'] })}>
        <option value="">any outcome</option>
        {OUTCOMES.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <label className="ep-filter-date">
        from <input type="date" aria-label="Recorded from" data-testid="ep-filter-since" value={filters.since ?? ''} onChange={(e) => change({ since: e.target.value || undefined })} />
      </label>
      <label className="ep-filter-date">
        to <input type="date" aria-label="Recorded until" data-testid="ep-filter-until" value={filters.until ?? ''} onChange={(e) => change({ until: e.target.value || undefined })} />
      </label>
      {active ? (
        <button className="ep-link" data-testid="ep-filter-clear" onClick={() => void setFilters({})}>
          clear filters
        </button>
      ) : null}
    </div>
  );
}
