import { describe, expect, it } from 'vitest';
import { migrationChecksum } from '../../core/memory/db';
import { migrations } from '../../core/memory/migrations';

// The checksum of every migration that has shipped, as databases in the field store it
// (schema_migrations.checksum). An edit to one, a move that changes a byte of its SQL, a lost
// step name or a reordered list makes openDatabase refuse those databases; this says which one
// changed before a user's database does. Written once from the list as it was before the list was
// split across core/memory/migrations/ (issue 45); new migrations are appended, never listed here
// retroactively changed.
const SHIPPED: [number, string, string][] = [
  [1, 'settings', '331c53ab989cabe3334f430dea7cbf9c6e93fdc3f00f99e6ac8e90bb1223c12e'],
  [2, 'memory', '073c4abe20826b8f21b9189b920c7418571dcad3df1c8c7d842cc3fee7657651'],
  [3, 'jobs', '73985078d6c6e1d34d4c7a22d33a83c57b8ea0ba63e08fcfda9039c59436f5c2'],
  [4, 'editor_hint_drafts', 'ac4e87ec6fc648f62f14b5601ed1ba1b9881fb9551d2e0a1d802a8626dd7d9a9'],
  [5, 'episodes', '6f056923455c013e5b2fd0f78e49757f43a1dce3cf8683b012efc10fb1396d31'],
  [6, 'audits', '177cee0ddf2bca15aa1fe952f63846cd5a21950731c0959774fdb2328317eb70'],
  [7, 'memory search prefix index', 'a7d00a2e9eaaae2730948b6e3b7a9029059d7d120f50dc0d4b615a2ed3cf3e05'],
  [8, 'memory search names split again', '571bb6a0c88d2606dff6c4f4cb66ef4d0fa34921f3a1a5de81efa2afd06384d8'],
  [9, 'drop imports table', 'a96621b0c5f052793cd03a1a6b0cee9f91c181232ebe1b463245a01425718720'],
  [10, "episode steps carry SPADE's converted step", '85d3f1ea4b09abca3b62211bd4b760c5ac91e69f596e590c63a1fe7fa8447ab0'],
  [11, 'what each job brought back', '0a35c584cb545d4de1ef46502d7b14dc6df4032f395ce8c211ec7855d1b00728'],
  [12, 'model runs', 'b16bff39f5c5ae116130cde092f0563a69a0c85ad98dde44b4d1dd2ea1cecd74'],
  [13, 'design rounds', 'ffc64ee5a1768d6c55e5f5c93a5f17452d6b392947d6f1a13e2b45c420175226'],
  [14, 'hint check of designed games', 'b8dfd7d244a50bd7c2390b787aca30ab9abe10e8b68175bcc861706ad9edcc7e'],
  [15, 'episodes by run', 'd1e14a312e52222a164b4df6cebe66793d133e0104216b389fe725bd501d29cf'],
  [16, 'metric axes and per-game returns of a job', '2c7089af3c379fb8a3d59da82eb1fb3340e4c8175e1d372c80848e5ca06ac41a'],
  [17, 'design round owner', '76f8003e124422619065a2fe23e1a0cb3cad721c849f819f9295fffba802afe0'],
  [18, 'GPU use of a job', 'df6331b6376a653ba4e7f74ea65f391637c7db2f83bfc2eb2fa08de4ad1003c7'],
  [19, 'regret estimator', '524e69e8234e1990700b76109e881d3130fca9510c9a09f27185431069a4433f'],
];

describe('shipped migrations', () => {
  it('keep their version, name and checksum, in order', () => {
    const got = migrations.slice(0, SHIPPED.length).map((m) => [m.version, m.name, migrationChecksum(m)]);
    expect(got).toEqual(SHIPPED);
  });

  it('are numbered 1, 2, 3... with no gap or repeat, later ones appended after them', () => {
    expect(migrations.length).toBeGreaterThanOrEqual(SHIPPED.length);
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });
});
