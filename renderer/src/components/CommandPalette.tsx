import { useEffect, useMemo, useRef, useState } from 'react';
import { fuzzyScore, useCommands } from '../store/commands';
import { quickOpenItems, type QuickOpenItem } from '../store/quickOpen';
import { attempt } from '../store/report';
import { useEscape } from './useEscape';

interface Row {
  id: string;
  label: string;
  detail?: string;
  hint?: string;
  run(): void | Promise<void>;
}

/** Each opening mounts a fresh body, so no query or selection from the last use can leak in. */
export function CommandPalette() {
  const open = useCommands((s) => s.paletteOpen);
  const mode = useCommands((s) => s.paletteMode);
  return open ? <PaletteBody key={mode} mode={mode} /> : null;
}

function PaletteBody({ mode }: { mode: 'commands' | 'quickOpen' }) {
  const close = useCommands((s) => s.closePalette);
  const commands = useCommands((s) => s.commands);
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState(0);
  const [quickItems, setQuickItems] = useState<QuickOpenItem[]>([]);
  const input = useRef<HTMLInputElement>(null);
  useEscape(close);

  useEffect(() => {
    if (mode !== 'quickOpen') return;
    let live = true;
    void quickOpenItems(query).then((items) => live && setQuickItems(items));
    return () => {
      live = false;
    };
  }, [mode, query]);

  const rows: Row[] = useMemo(() => {
    if (mode === 'quickOpen') return quickItems;
    return Object.values(commands)
      .map((c) => ({ c, score: fuzzyScore(query, `${c.category}: ${c.title}`) }))
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score || a.c.title.localeCompare(b.c.title))
      .map(({ c }) => ({ id: c.id, label: `${c.category}: ${c.title}`, ...(c.keybinding ? { hint: c.keybinding } : {}), run: c.run }));
  }, [mode, commands, query, quickItems]);

  const execute = (row: Row | undefined) => {
    if (!row) return;
    close();
    void attempt('command', row.label, async () => row.run());
  };

  return (
    <div className="palette-backdrop" onMouseDown={close}>
      <div className="palette" role="dialog" aria-label={mode === 'quickOpen' ? 'Quick open' : 'Command palette'} onMouseDown={(e) => e.stopPropagation()}>
        <input
          ref={input}
          autoFocus
          className="palette-input"
          placeholder={mode === 'quickOpen' ? 'Open an environment by name…' : 'Type a command…'}
          value={query}
          aria-label="Palette query"
          onChange={(e) => {
            setQuery(e.target.value);
            setSelected(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape') close();
            else if (e.key === 'ArrowDown') {
              e.preventDefault();
              setSelected((s) => Math.min(s + 1, rows.length - 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setSelected((s) => Math.max(s - 1, 0));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              execute(rows[selected]);
            }
          }}
        />
        <ul className="palette-list" role="listbox">
          {rows.length === 0 ? <li className="muted">No matches</li> : null}
          {rows.map((r, i) => (
            <li
              key={r.id}
              role="option"
              aria-selected={i === selected}
              className={i === selected ? 'selected' : ''}
              onMouseMove={() => i !== selected && setSelected(i)}
              onClick={() => execute(r)}
            >
              <span>{r.label}</span>
              {r.detail ? <span className="muted"> {r.detail}</span> : null}
              {r.hint ? <kbd className="right">{r.hint}</kbd> : null}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
