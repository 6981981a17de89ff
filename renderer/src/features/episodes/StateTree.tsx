import { useState } from 'react';

/** The harness's state tree ({className, fields}); nodes are {t, v} | {t, len, items} | {t, fields}. */
interface Node {
  t: string;
  v?: unknown;
  len?: number;
  items?: unknown[];
  fields?: [string, Node][];
  more?: number;
}

function isDict(n: Node): boolean {
  return Array.isArray(n.items) && n.items.length > 0 && n.items.every((x) => Array.isArray(x) && x.length === 2 && typeof x[0] === 'string');
}

function children(n: Node): [string, string, Node][] | null {
  if (n.fields) return n.fields.map(([k, x]) => [k, `.${k}`, x]);
  if (n.items === undefined) return null;
  if (isDict(n)) return (n.items as [string, Node][]).map(([k, x]) => [JSON.stringify(k), `[${JSON.stringify(k)}]`, x]);
  return (n.items as Node[]).map((x, i) => [String(i), `[${i}]`, x]);
}

function scalar(n: Node): string {
  return n.t === 'str' ? JSON.stringify(n.v) : String(n.v);
}

function Row({ name, path, node, changed, depth }: { name: string; path: string; node: Node; changed: Set<string>; depth: number }) {
  const kids = children(node);
  const [open, setOpen] = useState(depth < 2);
  const clean = path.startsWith('.') ? path.slice(1) : path;
  const hit = changed.has(clean);
  const inside = !hit && [...changed].some((c) => c.startsWith(clean) && (c[clean.length] === '[' || c[clean.length] === '.'));
  return (
    <li>
      <div className={`st-row${hit ? ' st-changed' : ''}${inside ? ' st-inside' : ''}`} data-path={clean} data-changed={hit ? 'true' : undefined} onClick={() => kids && setOpen(!open)}>
        <span className="st-twisty">{kids ? (open ? '\u25be' : '\u25b8') : ''}</span>
        <span className="st-name">{name}</span>
        <span className="st-type">{node.t}</span>
        {kids ? <span className="st-len muted">{kids.length === 0 ? 'empty' : `${node.len ?? kids.length} item${(node.len ?? kids.length) === 1 ? '' : 's'}`}</span> : <span className="st-value">{scalar(node)}</span>}
      </div>
      {kids && open ? (
        <ul>
          {kids.map(([label, seg, x]) => (
            <Row key={seg} name={label} path={path + seg} node={x} changed={changed} depth={depth + 1} />
          ))}
          {node.more ? <li className="muted st-more">… {node.more} more</li> : null}
        </ul>
      ) : null}
    </li>
  );
}

function isFieldList(x: unknown): x is [string, Node][] {
  return Array.isArray(x) && x.every((f) => Array.isArray(f) && f.length === 2 && typeof f[0] === 'string');
}

/**
 * The environment's internal state with the fields that changed since the previous step highlighted.
 * Where the harness also reports class attributes (`classFields`) and module globals
 * (`moduleGlobals`), they get their own groups: state that leaks across reset lives there.
 */
export function StateTree({ state, changed }: { state: unknown; changed: string[] }) {
  if (!state || typeof state !== 'object' || !Array.isArray((state as { fields?: unknown }).fields)) return <p className="muted">No state recorded for this step.</p>;
  const s = state as { className?: string; fields: [string, Node][]; classFields?: unknown; moduleGlobals?: unknown };
  const set = new Set(changed);
  const cls = s.className ?? 'object';
  return (
    <div className="state-tree" data-testid="state-tree">
      <div className="muted st-class">{cls}</div>
      <ul>
        {s.fields.map(([k, x]) => (
          <Row key={k} name={k} path={`.${k}`} node={x} changed={set} depth={0} />
        ))}
      </ul>
      {isFieldList(s.classFields) && s.classFields.length > 0 ? (
        <div data-testid="state-class-fields">
          <div className="muted st-class">class {cls} (shared by every instance)</div>
          <ul>
            {s.classFields.map(([k, x]) => (
              <Row key={k} name={k} path={`${cls}.${k}`} node={x} changed={set} depth={0} />
            ))}
          </ul>
        </div>
      ) : null}
      {isFieldList(s.moduleGlobals) && s.moduleGlobals.length > 0 ? (
        <div data-testid="state-module-globals">
          <div className="muted st-class">module globals</div>
          <ul>
            {s.moduleGlobals.map(([k, x]) => (
              <Row key={k} name={k} path={`globals.${k}`} node={x} changed={set} depth={0} />
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
