import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineReader } from '../../core/sweeps/lines';
import { parseRemoteResult } from '../../core/sweeps/remote';
import { checkSetKey, remoteAudit } from '../../core/audit/sweepKind';
import { addResult, createSweep, sweepResults } from '../../core/sweeps/sweepStore';
import { parseTarget } from '../../core/sweeps/targets';
import { zipStored } from '../../core/sweeps/zip';
import { openDatabase } from '../../core/memory/db';
import { main } from '../../core/cli/main';

describe('audit dispatch parts', () => {
  it('writes a zip that Python (what Ray unpacks with) reads back byte for byte', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spade-zip-'));
    try {
      const files = [
        { name: 'native/harness.py', data: Buffer.from('print("hi")\n') },
        { name: 'input/items.jsonl', data: Buffer.from('{"key": "é"}\n'.repeat(1000)) },
        { name: 'empty', data: Buffer.alloc(0) },
      ];
      writeFileSync(join(dir, 'p.zip'), zipStored(files));
      const r = spawnSync('python3', ['-c', 'import sys, zipfile, json; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(json.dumps({i.filename: z.read(i).decode() for i in z.infolist()}))', join(dir, 'p.zip')], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(Object.fromEntries(files.map((f) => [f.name, f.data.toString('utf8')])));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads whole lines only: a line still being written waits for its end', () => {
    const r = new LineReader();
    expect(r.push(Buffer.from('{"a":1}\n{"b":'))).toEqual(['{"a":1}']);
    expect(r.push(Buffer.from('2}\n'))).toEqual(['{"b":2}']);
    // A multi-byte character split between reads comes out whole.
    const e = Buffer.from('é\n');
    expect([...r.push(e.subarray(0, 1)), ...r.push(e.subarray(1))]).toEqual(['é']);
    expect(r.offset).toBe(Buffer.byteLength('{"a":1}\n{"b":2}\né\n'));
  });

  it('says what --on takes, and refuses anything else with a clear error', () => {
    expect(parseTarget(undefined)).toEqual({ kind: 'local' });
    expect(parseTarget('ray://127.0.0.1:8265')).toEqual({ kind: 'ray', address: 'http://127.0.0.1:8265' });
    expect(parseTarget('ray://head')).toEqual({ kind: 'ray', address: 'http://head:8265' });
    expect(parseTarget('slurm:login1')).toEqual({ kind: 'slurm', host: 'login1' });
    expect(() => parseTarget('kubernetes:x')).toThrow(/--on must be local, ray:\/\/HOST:PORT .* or slurm:HOST/);
  });

  it('keys results by the options that decide a verdict, and stores a result that comes twice once', () => {
    expect(checkSetKey({})).toBe(checkSetKey({ maxTurns: 30, callTimeoutSec: 5 }));
    expect(checkSetKey({ checks: ['spade.*'] })).not.toBe(checkSetKey({}));
    expect(checkSetKey({ maxTurns: 31 })).not.toBe(checkSetKey({}));
    const db = openDatabase(':memory:');
    try {
      const s = createSweep(db, { kind: 'audit', ident: 'i', target: 'local', query: '', options: {}, items: [] });
      const line = JSON.stringify({ key: 'h:k', reply: { id: 1, ok: true, result: { className: 'AEnv', toolUse: false, checks: [], elapsedMs: 1 } }, violations: [], phase: '', stderrTail: '' });
      const a = remoteAudit(parseRemoteResult(line)!, {})!;
      expect(addResult(db, s.id, 'h:k', a, null)).toBe(true);
      expect(addResult(db, s.id, 'h:k', a, null)).toBe(false);
      expect(sweepResults(db, s.id).size).toBe(1);
      // The sandbox's refusals reported by the node become the host-side `sandbox` check, as locally.
      const refused = remoteAudit(parseRemoteResult(JSON.stringify({ key: 'x', reply: { id: 1, ok: true, result: { className: 'AEnv', toolUse: false, checks: [], elapsedMs: 1 } }, violations: [{ event: 'open', detail: '/etc/passwd' }] }))!, {})!;
      expect(refused.checks.find((c) => c.id === 'sandbox')?.status).toBe('fail');
      // A cut line, and a node that could not start an interpreter: nothing to store, so it runs again.
      expect(parseRemoteResult('{"key": "h:k", "rep')).toBeNull();
      expect(remoteAudit({ key: 'x', failed: 'OSError' }, {})).toBeNull();
    } finally {
      db.close();
    }
  });

  it('refuses a bad pool command line with a clear error before touching any data dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spade-pool-cli-'));
    try {
      const run = async (args: string[]) => {
        let err = '';
        const code = await main(['audit', ...args, '--data-dir', join(dir, 'data')], { out: () => {}, err: (t) => void (err += t) });
        return { code, err };
      };
      expect(await run(['--pool', 'x', '--on', 'kubernetes:x'])).toMatchObject({ code: 2, err: expect.stringMatching(/--on must be local, ray:\/\/HOST:PORT/) });
      expect(await run(['--pool', 'x', '--resume', 'abc'])).toMatchObject({ code: 2, err: expect.stringMatching(/Give one of --pool QUERY, --resume SWEEP_ID or --cancel SWEEP_ID/) });
      expect(await run(['--resume', 'abc', '--on', 'ray://h:1'])).toMatchObject({ code: 2, err: expect.stringMatching(/--on goes with --pool/) });
      expect(await run(['--pool', 'x', '--shard-size', '0'])).toMatchObject({ code: 2, err: expect.stringMatching(/--shard-size must be a number from 1/) });
      expect(spawnSync('ls', [dir], { encoding: 'utf8' }).stdout.trim()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
