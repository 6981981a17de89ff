import { useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type EnvSummary, type MemorySort } from '../../../../core/api';
import { backend, log } from '../../store/app';
import { useWorkbench } from '../../store/workbench';
import { PAGE_SIZE, rowAt, useLibrary } from './store';
import { openEnvironment } from './open';
import { ImportDialog } from './ImportDialog';
import { environments, useEnvironments, watchEnvironments } from '../../store/environments';
import { attempt } from '../../store/report';
import { Visible } from '../../components/Visible';
import { visibleText } from '../../components/visibleText';
import { MeasuredCells, MeasuredFacet } from './MeasuredCells';

const ROW_HEIGHT = 26;

function SortHeader({ field, label, className, name = label }: { field: MemorySort['field']; label: string; className: string; name?: string }) {
  const sort = useLibrary((s) => s.sort);
  const setSort = useLibrary((s) => s.setSort);
  const active = sort?.field === field;
  return (
    <button
      className={`lib-th ${className} ${active ? 'active' : ''}`}
      onClick={() => setSort(active && sort.dir === 'desc' ? { field, dir: 'asc' } : active ? null : { field, dir: field === 'name' ? 'asc' : 'desc' })}
      title={`Sort by ${name}`}
    >
      {label}
      {active ? (sort.dir === 'asc' ? '▴' : '▾') : ''}
    </button>
  );
}

function Row({ env, index, top, cursor }: { env: EnvSummary | undefined; index: number; top: number; cursor: boolean }) {
  const selected = useLibrary((s) => (env ? !!s.selected[env.id] : false));
  const toggle = useLibrary((s) => s.toggleSelected);
  const verdict = useLibrary((s) => (env ? s.verdicts[env.hash] : undefined));
  const snippet = useLibrary((s) => (env ? s.snippets[env.id] : undefined));
  const style = { transform: `translateY(${top}px)`, height: ROW_HEIGHT };
  if (!env) {
    return (
      <div className="lib-row placeholder" style={style} aria-busy="true">
        <span className="muted">…</span>
      </div>
    );
  }
  return (
    <div
      className={`lib-row ${selected ? 'selected' : ''} ${env.rejected ? 'rejected' : ''} ${cursor ? 'cursor' : ''}`}
      aria-selected={cursor}
      style={style}
      role="row"
      aria-rowindex={index + 1}
      data-testid="library-row"
      onClick={(e) => (e.ctrlKey || e.metaKey ? toggle(env.id) : openEnvironment(env.id, env.name))}
      title={`${visibleText(env.name)}${env.skill ? ` · ${env.skill}` : ''} · ${env.hash.slice(0, 12)}${env.rejected ? ` · rejected (${env.rejectionStage ?? '?'})` : ''}${snippet ? `\n${snippet.field} line ${snippet.line}: ${visibleText(snippet.text)}` : ''}`}
    >
      <input type="checkbox" aria-label={`Select ${env.name}`} checked={selected} onClick={(e) => e.stopPropagation()} onChange={(e) => toggle(env.id, e.target.checked)} />
      <span className="lib-name">
        {env.seed ? <span className="lib-seed" title="Seed">★</span> : null}
        {env.kind === 'tool-use' ? <span className="lib-kind" title="Tool use">⚙</span> : null}
        <Visible text={env.name} />
        {env.flags.length ? <span className="lib-flag" title={env.flags.join(', ')}> ⚠</span> : null}
      </span>
      {snippet ? (
        <span className="lib-skill lib-snippet" data-testid="library-snippet" data-field={snippet.field}>
          {/* The column is narrow: start at the match (the tooltip has the whole line). */}
          {snippet.start > 0 ? '…' : ''}
          <mark>
            <Visible text={snippet.text.slice(snippet.start, snippet.end)} />
          </mark>
          <Visible text={snippet.text.slice(snippet.end)} />
        </span>
      ) : (
        <span className="lib-skill muted">{env.skill ?? '–'}</span>
      )}
      <MeasuredCells env={env} />
      <span className={`lib-num lib-rating ${env.rating === null ? 'muted' : ''}`} data-testid="library-rating" title={env.rating === null ? 'not rated' : `rated ${env.rating} of 5`}>
        {env.rating ?? '–'}
      </span>
      <span className={`lib-verdict ${verdict ?? 'none'}`} data-testid="library-verdict" title={verdict ? `audit: ${verdict}` : 'not audited'} aria-label={verdict ? `audit ${verdict}` : 'not audited'}>
        {verdict === 'fail' ? '✗' : verdict === 'warn' ? '!' : verdict === 'pass' ? '✓' : '·'}
      </span>
    </div>
  );
}

interface FacetItem {
  value: string;
  count: number;
  /** Shown instead of the value (a job's name for its run id); the value stays in the tooltip. */
  label?: string | null;
}

/** Long lists show their first `limit` entries (an active one always shows) and open on demand. */
function FacetList({ title, items, active, onToggle, testId, limit = 12 }: { title: string; items: FacetItem[]; active: string[]; onToggle(v: string): void; testId: string; limit?: number }) {
  const [all, setAll] = useState(false);
  if (!items.length) return null;
  const shown = all || items.length <= limit ? items : items.filter((f, i) => i < limit || active.includes(f.value));
  // Two runs may carry the same job name: the id tells them apart.
  const labels = new Map<string, number>();
  for (const f of items) if (f.label) labels.set(f.label, (labels.get(f.label) ?? 0) + 1);
  const text = (f: FacetItem) => (f.label ? ((labels.get(f.label) ?? 0) > 1 ? `${f.label} (${f.value.slice(0, 8)})` : f.label) : f.value);
  return (
    <div className="lib-facet" data-testid={testId}>
      <div className="lib-facet-title">{title}</div>
      {shown.map((f) => (
        <label key={f.value} className="lib-facet-item" title={f.label ? `${f.label} · ${f.value}` : f.value}>
          <input type="checkbox" checked={active.includes(f.value)} onChange={() => onToggle(f.value)} />
          <span className="lib-facet-value">{text(f)}</span>
          <span className="muted">{f.count.toLocaleString()}</span>
        </label>
      ))}
      {items.length > limit ? (
        <button className="link lib-facet-more" onClick={() => setAll(!all)} data-testid={`${testId}-more`}>
          {all ? 'fewer' : `${items.length - shown.length} more`}
        </button>
      ) : null}
    </div>
  );
}

function Facets() {
  const facets = useLibrary((s) => s.facets);
  const filters = useLibrary((s) => s.filters);
  const setFilters = useLibrary((s) => s.setFilters);
  const clearFilters = useLibrary((s) => s.clearFilters);
  const [open, setOpen] = useState(true);
  const toggleIn = (list: string[] | undefined, v: string) => (list?.includes(v) ? list.filter((x) => x !== v) : [...(list ?? []), v]);
  const anyFilter = Object.keys(filters).length > 0;
  return (
    <div className="lib-facets">
      <div className="lib-facets-head">
        <button className="link" onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? '▾' : '▸'} Filters
        </button>
        {anyFilter ? (
          <button className="link" onClick={clearFilters} data-testid="library-clear-filters">
            clear
          </button>
        ) : null}
      </div>
      {open ? (
        <div className="lib-facets-body">
          <div className="lib-chips">
            {(['game', 'tool-use'] as const).map((k) => (
              <button key={k} className={`chip ${filters.kind === k ? 'on' : ''}`} onClick={() => setFilters({ kind: filters.kind === k ? undefined : k })}>
                {k} {facets?.kinds.find((f) => f.value === k)?.count.toLocaleString() ?? ''}
              </button>
            ))}
            {/* A filter, worded and drawn as one (a check, "only"), so it is not taken for the ★ Seed action that marks environments. */}
            <button
              className={`chip ${filters.seed ? 'on' : ''}`}
              onClick={() => setFilters({ seed: filters.seed ? undefined : true })}
              aria-pressed={filters.seed === true}
              title="Show only seed environments (a filter; it changes no environment)"
              data-testid="library-filter-seeds"
            >
              {filters.seed ? '☑' : '☐'} seeds only {facets ? `(${facets.seeds.toLocaleString()})` : ''}
            </button>
            {filters.audit ? (
              <button className="chip on" onClick={() => setFilters({ audit: undefined })} title="Remove the audit filter" data-testid="library-filter-audit">
                audit: {filters.audit.checkId ?? 'verdict'} {filters.audit.status} ×
              </button>
            ) : null}
            <button
              className={`chip ${filters.rejected !== undefined ? 'on' : ''}`}
              onClick={() => setFilters({ rejected: filters.rejected === undefined ? false : filters.rejected === false ? true : undefined })}
              title="All → accepted only → rejected only"
            >
              {filters.rejected === undefined ? 'all' : filters.rejected ? 'rejected only' : 'accepted only'} ({facets?.rejected ?? 0} rejected)
            </button>
          </div>
          <AuditFacets />
          {/* Every skill: SPADE has fifteen, and a person filtering by one must find it. */}
          <FacetList title="Skill" testId="facet-skill" limit={Infinity} items={facets?.skills ?? []} active={filters.skills ?? []} onToggle={(v) => setFilters({ skills: toggleIn(filters.skills, v) })} />
          <FacetList title="Tag" testId="facet-tag" items={facets?.tags ?? []} active={filters.tags ?? []} onToggle={(v) => setFilters({ tags: toggleIn(filters.tags, v) })} />
          <FacetList title="Run" testId="facet-run" items={facets?.runs ?? []} active={filters.run ? [filters.run] : []} onToggle={(v) => setFilters({ run: filters.run === v ? undefined : v })} />
          <FacetList
            title="Rejection stage"
            testId="facet-stage"
            items={facets?.rejectionStages ?? []}
            active={filters.rejectionStage ? [filters.rejectionStage] : []}
            onToggle={(v) => setFilters({ rejectionStage: filters.rejectionStage === v ? undefined : v })}
          />
          <MeasuredFacet />
          <div className="lib-ranges">
            <label>
              recorded regret ≥{' '}
              <input type="number" step="0.05" value={filters.regret?.min ?? ''} onChange={(e) => setFilters({ regret: e.target.value === '' ? undefined : { min: Number(e.target.value) } })} />
            </label>
            <label>
              recorded win rate{' '}
              <input type="number" step="0.05" min={0} max={1} placeholder="min" value={filters.winRate?.min ?? ''} onChange={(e) => setFilters({ winRate: { ...filters.winRate, min: e.target.value === '' ? undefined : Number(e.target.value) } })} />
              –
              <input type="number" step="0.05" min={0} max={1} placeholder="max" value={filters.winRate?.max ?? ''} onChange={(e) => setFilters({ winRate: { ...filters.winRate, max: e.target.value === '' ? undefined : Number(e.target.value) } })} />
            </label>
          </div>
        </div>
      ) : null}
    </div>
  );
}

/** The stored audit of each head version: by verdict, or by a check it fails (one audit filter at a time). */
function AuditFacets() {
  const audit = useLibrary((s) => s.facets?.audit);
  const filter = useLibrary((s) => s.filters.audit);
  const setFilters = useLibrary((s) => s.setFilters);
  if (!audit) return null;
  const verdict: string[] = filter && !filter.checkId ? [filter.status] : [];
  const failing: string[] = filter?.checkId && filter.status === 'fail' ? [filter.checkId] : [];
  return (
    <>
      <FacetList
        title="Audit verdict"
        testId="facet-audit"
        items={audit.verdicts.map((v) => ({ ...v, label: v.value === 'pass' ? 'passing' : v.value === 'fail' ? 'failing' : 'warnings' }))}
        active={verdict}
        onToggle={(v) => setFilters({ audit: verdict.includes(v) ? undefined : { status: v as 'pass' | 'warn' | 'fail' } })}
      />
      <FacetList title="Failing check" testId="facet-failing" items={audit.failing} active={failing} onToggle={(v) => setFilters({ audit: failing.includes(v) ? undefined : { checkId: v, status: 'fail' } })} />
    </>
  );
}

function BulkBar() {
  const selected = useLibrary((s) => s.selected);
  const clear = useLibrary((s) => s.clearSelection);
  const [tag, setTag] = useState('');
  const ids = useMemo(() => Object.keys(selected).map(Number), [selected]);
  if (!ids.length) return null;
  const validTag = /^[^\s,]{1,64}$/.test(tag.trim());
  return (
    <div className="lib-bulk" data-testid="library-bulk">
      <span>{ids.length.toLocaleString()} selected</span>
      <button onClick={() => void environments.setSeed(ids, true)} title="Mark the selected environments as seeds" data-testid="library-bulk-seed">
        ★ Seed
      </button>
      <button onClick={() => void environments.setSeed(ids, false)}>Unseed</button>
      {/* The tag box is labelled where it stands, and a disabled + Tag says what it waits for. */}
      <label className="lib-bulk-tag">
        Tag <input placeholder="name" value={tag} onChange={(e) => setTag(e.target.value)} aria-label="Tag to apply" data-testid="library-bulk-tag" />
      </label>
      <button disabled={!validTag} title={validTag ? `Add the tag "${tag.trim()}" to the selected environments` : 'Type a tag name in the Tag box first (no spaces or commas)'} data-testid="library-bulk-tag-add" onClick={() => void environments.tag(ids, { add: [tag.trim()] })}>
        + Tag
      </button>
      <button disabled={!validTag} title={validTag ? `Remove the tag "${tag.trim()}" from the selected environments` : 'Type a tag name in the Tag box first'} onClick={() => void environments.tag(ids, { remove: [tag.trim()] })}>
        − Tag
      </button>
      <button className="link" onClick={clear}>
        clear
      </button>
    </div>
  );
}

/** "Select all matching": every environment of the current search, not just the rows loaded. */
function SelectAll({ total }: { total: number }) {
  const selectedCount = useLibrary((s) => Object.keys(s.selected).length);
  const selectAll = useLibrary((s) => s.selectAllMatching);
  const [busy, setBusy] = useState(false);
  if (total === 0 || selectedCount >= total) return null;
  return (
    <>
      {' · '}
      <button
        className="link"
        disabled={busy}
        data-testid="library-select-all"
        onClick={async () => {
          setBusy(true);
          const r = await attempt('library', 'Select all', selectAll);
          setBusy(false);
          if (r?.truncated) log('warn', 'library', `Selected the newest ${r.count.toLocaleString()} matching environments (the most one bulk action takes)`);
        }}
      >
        {busy ? 'selecting…' : 'select all'}
      </button>
    </>
  );
}

export function LibraryPanel() {
  const query = useLibrary((s) => s.query);
  const setQuery = useLibrary((s) => s.setQuery);
  const total = useLibrary((s) => s.total);
  const pages = useLibrary((s) => s.pages);
  const error = useLibrary((s) => s.error);
  const ensurePages = useLibrary((s) => s.ensurePages);
  const refresh = useLibrary((s) => s.refresh);
  const generation = useLibrary((s) => s.generation);
  const setImportOpen = useLibrary((s) => s.setImportOpen);
  const importOpen = useLibrary((s) => s.importOpen);
  const scroller = useRef<HTMLDivElement>(null);

  // Other features ask for a filtered library through the workbench store (they never import us).
  const libraryFilter = useWorkbench((s) => s.libraryFilter);
  useEffect(() => {
    if (!libraryFilter) return;
    useLibrary.getState().showOnly(libraryFilter.filters);
    useWorkbench.setState({ libraryFilter: null }); // consumed: a later remount must not apply it again
  }, [libraryFilter]);

  useEffect(() => {
    if (generation === 0) refresh();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Imports and bulk edits announce themselves (through the one store of environments); coalesce a burst into one reload.
    watchEnvironments();
    const off = useEnvironments.subscribe((now, before) => {
      if (now.change.seq === before.change.seq) return;
      clearTimeout(timer);
      // A call made before the socket was up failed: a (re)opened connection reloads at once.
      if (now.change.reason === 'reconnect') useLibrary.getState().refresh();
      else timer = setTimeout(() => useLibrary.getState().refresh(), 300);
    });
    // A model run measures as it goes (an event per episode): its numbers reach the columns at most every 2 s.
    let runTimer: ReturnType<typeof setTimeout> | undefined;
    const offRuns = backend().on('runs.changed', () => {
      runTimer ??= setTimeout(() => {
        runTimer = undefined;
        useLibrary.getState().refresh();
      }, 2000);
    });
    return () => {
      off();
      offRuns();
      clearTimeout(timer);
      clearTimeout(runTimer);
    };
  }, []);

  const virtualizer = useVirtualizer({ count: total, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 30 });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => {
    const need: number[] = [];
    for (let p = Math.floor(first / PAGE_SIZE); p <= Math.floor(last / PAGE_SIZE); p++) need.push(p);
    ensurePages(need);
  }, [first, last, generation, ensurePages]);
  useEffect(() => {
    scroller.current?.scrollTo({ top: 0 });
    setCursor(-1);
  }, [generation]);

  // Arrow keys go from the search box into the results and through them; Enter opens one.
  const [cursor, setCursor] = useState(-1);
  const search = useRef<HTMLInputElement>(null);
  const moveTo = (i: number) => {
    const next = Math.max(0, Math.min(total - 1, i));
    setCursor(next);
    virtualizer.scrollToIndex(next, { align: 'auto' });
  };
  const onResultsKey = (e: React.KeyboardEvent) => {
    if (e.key === 'ArrowDown') moveTo(cursor + 1);
    else if (e.key === 'ArrowUp') {
      if (cursor <= 0) {
        setCursor(-1);
        search.current?.focus();
      } else moveTo(cursor - 1);
    } else if (e.key === 'PageDown') moveTo(cursor + 20);
    else if (e.key === 'PageUp') moveTo(cursor - 20);
    else if (e.key === 'Enter' || e.key === ' ') {
      const env = rowAt(pages, cursor);
      if (!env) return;
      if (e.key === ' ' || e.ctrlKey || e.metaKey) useLibrary.getState().toggleSelected(env.id);
      else openEnvironment(env.id, env.name);
    } else return;
    e.preventDefault();
  };

  return (
    <div className="library" data-testid="library-panel">
      <div className="lib-search">
        <input
          type="search"
          placeholder="Search code, hints, notes, names…"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          ref={search}
          onKeyDown={(e) => {
            if (e.key !== 'ArrowDown' || total === 0) return;
            e.preventDefault();
            moveTo(0);
            scroller.current?.focus();
          }}
          aria-label="Search environments"
          data-testid="library-search"
        />
        <button onClick={() => setImportOpen(true)} title="Import environments" data-testid="library-import-open">
          Import…
        </button>
      </div>
      <Facets />
      <div className="lib-count muted" data-testid="library-count">
        {total.toLocaleString()} environment{total === 1 ? '' : 's'}
        {error ? <span className="lib-error"> · {error}</span> : null}
        <SelectAll total={total} />
      </div>
      <BulkBar />
      <div className="lib-table" role="table" aria-label="Environments" aria-rowcount={total}>
        <div className="lib-header" role="row">
          <span className="lib-check" />
          <SortHeader field="name" label="Name" className="lib-name" />
          <SortHeader field="skill" label="Skill" className="lib-skill" />
          <SortHeader field="measuredRegret" label="Regret" className="lib-num" />
          <SortHeader field="measuredWinRate" label="Win" className="lib-num lib-win" />
          <SortHeader field="blend" label="Blend" name="SPADE's designer blend (of the measured numbers)" className="lib-num lib-blend" />
          <SortHeader field="model" label="Model" className="lib-model" />
          <SortHeader field="regret" label="Rec." className="lib-num lib-recorded" />
          <SortHeader field="rating" label="★" name="rating" className="lib-num lib-rating" />
          <span className="lib-th lib-verdict" title="Audit verdict of the head version">Audit</span>
        </div>
        <div className="lib-scroll" ref={scroller} data-testid="library-scroll" tabIndex={0} onKeyDown={onResultsKey} aria-label="Results (arrow keys move, Enter opens)">
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {items.map((it) => (
              <Row key={it.key} index={it.index} top={it.start} env={rowAt(pages, it.index)} cursor={it.index === cursor} />
            ))}
          </div>
        </div>
      </div>
      {importOpen ? <ImportDialog onClose={() => setImportOpen(false)} /> : null}
    </div>
  );
}
