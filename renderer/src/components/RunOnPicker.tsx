import { useEffect, useState } from 'react';
import type { CallInput } from '../../../core/api';
import { backend } from '../store/app';
import { attempt } from '../store/report';

/** Where work runs, as the API names it (a pool audit's target, a design round's checks). */
export type RunOnTarget = NonNullable<CallInput<'audit.poolStart'>['target']>;

type Choice = { kind: 'local' } | { kind: 'slurm'; host: string } | { kind: 'ray' };

/** How a stored target label (`local`, `slurm:HOST`, `ray://HOST:PORT`) reads to a person. */
export function runOnText(t: string): string {
  if (t === 'local') return 'this machine';
  if (t.startsWith('slurm:')) return `Slurm on ${t.slice(6)}`;
  return `Ray at ${t.replace(/^ray:\/\//, '')}`;
}

/**
 * The "Run on" choice: this machine, one of the Jobs page's saved hosts (its Slurm), or a Ray head
 * (its dashboard address and, optionally, the Python with ray there). Reports the target as the API
 * takes it whenever a field changes.
 */
export function RunOnPicker({ label, testPrefix, onChange }: { label: string; testPrefix: string; onChange(t: RunOnTarget): void }) {
  const [hosts, setHosts] = useState<string[]>([]);
  const [choice, setChoice] = useState<Choice>({ kind: 'local' });
  const [rayAddress, setRayAddress] = useState('127.0.0.1:8265');
  const [rayPython, setRayPython] = useState('');

  useEffect(() => {
    // No hosts known is the same as none configured: the picker offers this machine and Ray.
    void attempt('audit', 'Sweep hosts', () => backend().call('audit.sweepHosts', {}), { quiet: 'warn' }).then((r) => setHosts(r?.hosts ?? []));
  }, []);
  useEffect(() => {
    onChange(choice.kind === 'ray' ? { kind: 'ray', address: rayAddress.trim(), ...(rayPython.trim() ? { python: rayPython.trim() } : {}) } : choice);
  }, [choice, rayAddress, rayPython, onChange]);

  const value = choice.kind === 'slurm' ? `slurm:${choice.host}` : choice.kind;
  return (
    <>
      <label>
        {label}
        <select
          data-testid={`${testPrefix}-on`}
          value={value}
          onChange={(e) => {
            const v = e.target.value;
            setChoice(v === 'local' ? { kind: 'local' } : v === 'ray' ? { kind: 'ray' } : { kind: 'slurm', host: v.slice(6) });
          }}
        >
          <option value="local">This machine</option>
          {hosts.map((h) => (
            <option key={h} value={`slurm:${h}`}>
              Slurm on {h} (a saved job host)
            </option>
          ))}
          <option value="ray">A Ray cluster…</option>
        </select>
      </label>
      {choice.kind === 'ray' && (
        <>
          <label>
            Ray address
            <input data-testid={`${testPrefix}-ray-address`} value={rayAddress} onChange={(e) => setRayAddress(e.target.value)} placeholder="HOST:PORT of the head's dashboard" spellCheck={false} />
          </label>
          <label>
            Python with ray on the head
            <input data-testid={`${testPrefix}-ray-python`} value={rayPython} onChange={(e) => setRayPython(e.target.value)} placeholder="python3 (optional)" spellCheck={false} />
          </label>
        </>
      )}
      {hosts.length === 0 && <span className="muted run-on-hint">Slurm hosts appear here once a job was launched on them from the Jobs page.</span>}
    </>
  );
}
