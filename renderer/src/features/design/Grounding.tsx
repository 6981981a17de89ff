import type { DesignGame } from '../../../../core/api/calls/design';

type Attempt = DesignGame['attempts'][number];

/**
 * Where a round's prompts came from (issue 44): SPADE's own texts, read from a SPADE checkout at
 * run time, or the workbench's own template, which says it is ours.
 */
export function PromptsLine({ config }: { config: Record<string, unknown> }) {
  const p = config.prompts as { kind?: string; src?: string | null } | undefined;
  const corpus = (config.extra as { corpus?: string | null } | undefined)?.corpus ?? (config.corpus as string | null | undefined) ?? null;
  if (!p) return null;
  return (
    <div className="design-prompts-from" data-testid="design-prompts-from" data-kind={p.kind}>
      {p.kind === 'spade' ? (
        <>
          Prompts: <strong>SPADE&rsquo;s</strong>, read at run time from the checkout <span className="mono">{p.src}</span>
        </>
      ) : (
        <>Prompts: the workbench&rsquo;s own template (not SPADE&rsquo;s); set a SPADE checkout in Settings to use SPADE&rsquo;s</>
      )}
      {corpus ? (
        <>
          {' '}
          · grounded on the corpus <span className="mono">{corpus}</span>
        </>
      ) : null}
    </div>
  );
}

/** The corpus document an attempt's prompt was grounded on, shown beside the game it grounded. */
export function GroundingDocument({ doc }: { doc: NonNullable<Attempt['document']> }) {
  const file = doc.corpus.split(/[\\/]/).pop();
  return (
    <aside className="design-grounding" data-testid="design-grounding">
      <h5>
        Grounding document <span className="muted">#{doc.docId} of {file}{doc.truncated ? `, cut at ${doc.maxWords} words as SPADE cuts it` : ''}</span>
      </h5>
      <pre className="design-grounding-text">{doc.text}</pre>
    </aside>
  );
}

/** The system message sent before the prompt (SPADE's designer system prompt), when there was one. */
export function SystemSent({ a }: { a: Attempt }) {
  if (a.system === null) return null;
  return (
    <details>
      <summary>System message sent</summary>
      <pre className="design-prompt mono">{a.system}</pre>
    </details>
  );
}
