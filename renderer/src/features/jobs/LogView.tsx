import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import '@xterm/xterm/css/xterm.css';
import { backend } from '../../store/app';
import { formatLogChunk } from './logFormat';

const CHUNK = 4 * 1024 * 1024;

/**
 * The job's mirrored log in xterm.js. It reads whole lines by byte offset (the same offsets the
 * engine keeps), so a reconnect or a re-opened tab continues exactly where it stopped.
 */
export function LogView({ jobId, jobName }: { jobId: string; jobName: string }) {
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const search = useRef<SearchAddon | null>(null);
  const offset = useRef(0);
  const [follow, setFollow] = useState(true);
  const followRef = useRef(true);
  const [query, setQuery] = useState('');
  const [lines, setLines] = useState(0);
  const [bytes, setBytes] = useState(0);

  useEffect(() => {
    const t = new Terminal({ convertEol: true, disableStdin: true, scrollback: 1_000_000, fontSize: 12, theme: { background: '#1e1e1e' } });
    const fit = new FitAddon();
    const s = new SearchAddon();
    t.loadAddon(fit);
    t.loadAddon(s);
    t.open(host.current!);
    fit.fit();
    term.current = t;
    search.current = s;
    offset.current = 0;
    let alive = true;
    let reading = false;
    let again = false;
    let count = 0;
    const pump = async (): Promise<void> => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          for (;;) {
            const r = await backend().call('jobs.log', { id: jobId, offset: offset.current, maxBytes: CHUNK });
            if (!alive) return;
            if (r.text) {
              let n = 0;
              for (let i = r.text.indexOf('\n'); i >= 0; i = r.text.indexOf('\n', i + 1)) n++;
              count += n;
              await new Promise<void>((res) => t.write(formatLogChunk(r.text), res));
              if (followRef.current) t.scrollToBottom();
              setLines(count);
            }
            offset.current = r.nextOffset;
            setBytes(r.nextOffset);
            if (r.nextOffset >= r.size || !r.text) break;
          }
        } while (again && alive);
      } finally {
        reading = false;
      }
    };
    const off = backend().on('jobs.logGrew', (p) => {
      if (p.id === jobId) void pump();
    });
    const onResize = () => fit.fit();
    window.addEventListener('resize', onResize);
    const ro = new ResizeObserver(() => fit.fit());
    ro.observe(host.current!);
    void pump();
    return () => {
      alive = false;
      off();
      ro.disconnect();
      window.removeEventListener('resize', onResize);
      t.dispose();
    };
  }, [jobId]);

  const download = async () => {
    const parts: string[] = [];
    let at = 0;
    for (;;) {
      const r = await backend().call('jobs.log', { id: jobId, offset: at, maxBytes: CHUNK });
      parts.push(r.text);
      at = r.nextOffset;
      if (at >= r.size || !r.text) break;
    }
    const url = URL.createObjectURL(new Blob(parts, { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${jobName.replace(/[^A-Za-z0-9._-]+/g, '_') || 'job'}.log`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  return (
    <div className="jobs-log">
      <div className="jobs-log-bar">
        <label>
          <input
            type="checkbox"
            checked={follow}
            data-testid="jobs-follow"
            onChange={(e) => {
              setFollow(e.target.checked);
              followRef.current = e.target.checked;
              if (e.target.checked) term.current?.scrollToBottom();
            }}
          />{' '}
          Follow
        </label>
        <input
          type="search"
          placeholder="Search the log"
          value={query}
          data-testid="jobs-log-search"
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              const found = e.shiftKey ? search.current?.findPrevious(query) : search.current?.findNext(query);
              e.currentTarget.dataset.found = String(!!found);
            }
          }}
        />
        <button onClick={() => void download()} data-testid="jobs-log-download">
          Download
        </button>
        <span className="muted" data-testid="jobs-log-count" data-lines={lines} data-bytes={bytes}>
          {lines.toLocaleString()} lines
        </span>
      </div>
      <div className="jobs-term" ref={host} data-testid="jobs-term" />
    </div>
  );
}
