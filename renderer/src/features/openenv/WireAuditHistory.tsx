import { useEffect, useState } from 'react';
import type { StoredWireAuditView } from '../../../../core/api/calls/openenvClient';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';

/** The wire.* checks, with the short heads their columns take (the id is the head's tooltip). */
const CHECKS = [
  ['wire.determinism', 'determinism'],
  ['wire.seed_use', 'seed use'],
  ['wire.malformed_action', 'malformed action'],
  ['wire.reward_range', 'reward range'],
] as const;

/** Whether a typed URL is worth asking about (the engine says why a bad one is bad when it is used). */
const looksLikeUrl = (u: string) => /^https?:\/\/[^\s/]+/.test(u);

/**
 * The wire audits kept for the server at the page's URL (the app's and the CLI's openenv-audit),
 * newest first: time, verdict and each check's status. `latest` is the audit just run, so the
 * list is asked again after it.
 */
export function WireAuditHistory({ url, latest }: { url: string; latest: unknown }) {
  const [audits, setAudits] = useState<StoredWireAuditView[] | null>(null);
  useEffect(() => {
    if (!looksLikeUrl(url)) {
      setAudits(null);
      return;
    }
    let live = true;
    // Typed one character at a time: ask once the URL has stopped changing.
    const t = setTimeout(() => {
      void attempt('openenv', 'Wire audits of this server', () => backend().call('openenv.remote.audits', { url, limit: 20 }), { quiet: 'debug' }).then((r) => live && setAudits(r ? r.audits : null));
    }, 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [url, latest]);

  if (!audits) return null;
  return (
    <section className="remote-audit-history" data-testid="wire-audit-history">
      <h3>Wire audits of this server</h3>
      <p className="muted">The workbench&apos;s own checks over OpenEnv&apos;s protocol (run here or by openenv-audit), kept; not SPADE&apos;s audit of the program.</p>
      {audits.length === 0 ? (
        <div className="muted" data-testid="wire-audit-none">
          None yet: “Audit over the wire” after opening, or <code>spade-workbench openenv-audit --url {url}</code>.
        </div>
      ) : (
        <div className="remote-table-wrap">
          <table className="runs-table">
            <thead>
              <tr>
                <th>time</th>
                <th>verdict</th>
                {CHECKS.map(([id, head]) => (
                  <th key={id} title={id}>
                    {head}
                  </th>
                ))}
                <th>server · by</th>
              </tr>
            </thead>
            <tbody>
              {audits.map((a) => (
                <tr key={a.id} data-testid="wire-audit-row">
                  <td className="nowrap">{new Date(a.createdAt).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}</td>
                  <td className={`verdict-${a.verdict}`} data-testid="wire-audit-verdict">
                    {a.verdict}
                  </td>
                  {CHECKS.map(([id]) => {
                    const c = a.checks.find((x) => x.id === id);
                    return (
                      <td key={id} className={c ? `verdict-${c.status}` : 'muted'} title={c?.message ?? 'not run'} data-testid={`wire-audit-${id}`}>
                        {c?.status ?? '–'}
                      </td>
                    );
                  })}
                  <td className="muted">
                    {a.serverName ?? 'unnamed'}
                    {a.serverVersion ? ` v${a.serverVersion}` : ''} · {a.source === 'cli' ? 'CLI' : 'app'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
