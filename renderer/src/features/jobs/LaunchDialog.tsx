import { useEffect, useState } from 'react';
import type { JobRecipe, LaunchInput } from '../../../../core/api/calls/jobs';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { JobDialog, KeyFileField, sshTargetOf, useJobStart } from './JobDialog';
import { PathField } from '../../components/PathField';
import { mergeKnobs, RecipeKnobs } from './RecipeKnobs';

type Backend = LaunchInput['backend'];

interface HostKeyPrompt {
  host: string;
  port: number;
  keyType: string;
  fingerprint: string;
  status: 'unknown' | 'changed';
  message: string;
}

/** KEY=value per line; anything else is reported instead of silently dropped. */
export function parseEnvLines(text: string): { env: Record<string, string>; errors: string[] } {
  const env: Record<string, string> = {};
  const errors: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim() || line.trim().startsWith('#')) return;
    const eq = line.indexOf('=');
    const key = eq > 0 ? line.slice(0, eq).trim() : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) errors.push(`line ${i + 1}: expected NAME=value`);
    else env[key] = line.slice(eq + 1);
  });
  return { env, errors };
}

/** Launch a job: backend, host, recipe, working directory, variables, secrets and the pool to ship. */
export function LaunchDialog({ onClose }: { onClose: () => void }) {
  const [recipes, setRecipes] = useState<JobRecipe[]>([]);
  const [hosts, setHosts] = useState<string[]>([]);
  const [secretNames, setSecretNames] = useState<string[]>([]);
  const [secretStore, setSecretStore] = useState<'memory' | 'keychain'>('memory');
  const [kind, setKind] = useState<Backend>('local');
  const [recipe, setRecipe] = useState('example-run');
  const [name, setName] = useState('example run');
  const [host, setHost] = useState('');
  const [port, setPort] = useState('');
  const [user, setUser] = useState('');
  const [keyFile, setKeyFile] = useState('');
  const [workdir, setWorkdir] = useState('');
  const [envText, setEnvText] = useState('');
  const [knobs, setKnobs] = useState<Record<string, string>>({});
  const [secretName, setSecretName] = useState('');
  const [secretValue, setSecretValue] = useState('');
  const [useSecrets, setUseSecrets] = useState<string[]>([]);
  const [pool, setPool] = useState<'seed' | 'none' | 'ids'>('seed');
  const [poolIds, setPoolIds] = useState('');
  const [partition, setPartition] = useState('');
  const [gpus, setGpus] = useState('');
  const [cpus, setCpus] = useState('');
  const [mem, setMem] = useState('');
  const [time, setTime] = useState('');
  const [container, setContainer] = useState('');
  const [rayAddress, setRayAddress] = useState('http://127.0.0.1:8265');
  const [rayTunnel, setRayTunnel] = useState(true);
  const { busy, error, setError, start } = useJobStart(onClose);
  const [hostKey, setHostKey] = useState<HostKeyPrompt | null>(null);

  useEffect(() => {
    // What the form offers; a list that cannot be had is said on the dialog's error line (it was an unhandled rejection).
    void attempt('jobs', 'Recipes', () => backend().call('jobs.recipes', {}), { show: setError }).then((r) => r && setRecipes(r.recipes));
    void attempt('jobs', 'SSH hosts', () => backend().call('jobs.sshHosts', {}), { show: setError }).then((r) => r && setHosts(r.hosts));
    void attempt('jobs', 'Secrets', () => backend().call('jobs.secrets', {}), { show: setError }).then((r) => {
      if (!r) return;
      setSecretNames(r.names);
      setSecretStore(r.store);
    });
  }, []);
  const current = recipes.find((r) => r.id === recipe);
  useEffect(() => {
    if (current && !current.backends.includes(kind)) setKind(current.backends[0] ?? 'local');
    if (current) setUseSecrets(current.secretEnv.filter((n) => secretNames.includes(n)));
    setKnobs({});
  }, [recipe, recipes.length]);

  const addSecret = async () => {
    setError('');
    const r = await attempt('jobs', 'Add secret', () => backend().call('jobs.setSecret', { name: secretName.trim(), value: secretValue }), { show: setError });
    if (!r) return;
    setSecretNames(r.names);
    if (secretValue) setUseSecrets((u) => [...new Set([...u, secretName.trim()])]);
    setSecretValue('');
  };

  const request = (): LaunchInput | null => {
    const typed = parseEnvLines(envText);
    const { env, errors } = typed.errors.length ? typed : mergeKnobs(knobs, typed.env);
    if (errors.length) {
      setError(`Environment variables: ${errors.join('; ')}`);
      return null;
    }
    const input: LaunchInput = { name: name.trim() || 'job', backend: kind, env, secretEnv: useSecrets };
    if (recipe) input.recipe = recipe;
    if (workdir.trim()) input.workdir = workdir.trim();
    const ssh = kind !== 'local' ? sshTargetOf(host, port, user, keyFile) : undefined;
    if (ssh) input.ssh = ssh;
    if (kind === 'slurm') {
      input.slurm = {
        ...(partition ? { partition } : {}),
        ...(gpus ? { gpus: Number(gpus) } : {}),
        ...(cpus ? { cpusPerTask: Number(cpus) } : {}),
        ...(mem ? { mem } : {}),
        ...(time ? { time } : {}),
        ...(container ? { container } : {}),
      };
    }
    if (kind === 'ray') input.ray = { tunnel: rayTunnel, ...(rayAddress.trim() ? { address: rayAddress.trim() } : {}) };
    if (pool === 'none') input.noPool = true;
    if (pool === 'ids') input.poolEnvIds = poolIds.split(/[\s,]+/).filter(Boolean).map(Number);
    return input;
  };

  const submit = () =>
    start(async () => {
      const input = request();
      if (!input) return null;
      if (input.ssh) {
        const probe = await backend().call('jobs.probeHost', { ssh: input.ssh });
        if (probe.status !== 'trusted') {
          setHostKey({ host: probe.host ?? '', port: probe.port ?? 22, keyType: probe.keyType ?? '', fingerprint: probe.fingerprint ?? '', status: probe.status, message: probe.message ?? '' });
          return null;
        }
      }
      return backend().call('jobs.submit', input);
    });

  const trust = async () => {
    if (!hostKey) return;
    await backend().call('jobs.trustHost', { host: hostKey.host, port: hostKey.port, fingerprint: hostKey.fingerprint });
    setHostKey(null);
    await submit();
  };

  return (
    <JobDialog
      title="Launch a job"
      testId="jobs-launch"
      onSubmit={() => void submit()}
      onClose={onClose}
      error={error}
      submit={{ label: 'Launch', busyLabel: 'Launching…', busy, disabled: busy, testId: 'jobs-submit' }}
    >
      <div className="jobs-grid">
        <label>
          Recipe
          <select value={recipe} onChange={(e) => setRecipe(e.target.value)} data-testid="jobs-recipe">
            {recipes.map((r) => (
              <option key={r.id} value={r.id}>
                {r.title}
              </option>
            ))}
            <option value="">(custom command)</option>
          </select>
        </label>
        <label>
          Backend
          <select value={kind} onChange={(e) => setKind(e.target.value as Backend)} data-testid="jobs-backend">
            {(['local', 'ssh', 'slurm', 'ray'] as const).map((b) => (
              <option key={b} value={b} disabled={!!current && !current.backends.includes(b)}>
                {b}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} data-testid="jobs-name" />
        </label>
        <label>
          Working directory
          {kind === 'local' ? (
            <PathField label="Working directory" value={workdir} placeholder="~/.spade-workbench-runs" onChange={setWorkdir} testId="jobs-workdir" />
          ) : (
            <input value={workdir} placeholder="~ (on the host)" onChange={(e) => setWorkdir(e.target.value)} data-testid="jobs-workdir" />
          )}
        </label>
        {kind !== 'local' ? (
          <>
            <label>
              Host (~/.ssh/config alias or address)
              <input list="jobs-hosts" value={host} onChange={(e) => setHost(e.target.value)} data-testid="jobs-host" />
              <datalist id="jobs-hosts">
                {hosts.map((h) => (
                  <option key={h} value={h} />
                ))}
              </datalist>
            </label>
            <label className="jobs-inline">
              Port <input value={port} size={6} onChange={(e) => setPort(e.target.value.replace(/\D/g, ''))} data-testid="jobs-port" />
              User <input value={user} size={10} onChange={(e) => setUser(e.target.value)} data-testid="jobs-user" />
            </label>
            <KeyFileField value={keyFile} onChange={setKeyFile} testId="jobs-keyfile" />
          </>
        ) : null}
        {kind === 'slurm' ? (
          <label className="jobs-inline jobs-wide">
            Partition <input value={partition} size={10} onChange={(e) => setPartition(e.target.value)} />
            GPUs <input value={gpus} size={3} placeholder={String(current?.slurm?.gpus ?? '')} onChange={(e) => setGpus(e.target.value.replace(/\D/g, ''))} />
            CPUs <input value={cpus} size={4} placeholder={String(current?.slurm?.cpusPerTask ?? '')} onChange={(e) => setCpus(e.target.value.replace(/\D/g, ''))} />
            Memory <input value={mem} size={6} placeholder={current?.slurm?.mem ?? ''} onChange={(e) => setMem(e.target.value.trim())} />
            Time <input value={time} size={9} placeholder={current?.slurm?.time ?? '48:00:00'} onChange={(e) => setTime(e.target.value)} />
            Container <input value={container} size={18} placeholder="(none)" onChange={(e) => setContainer(e.target.value)} />
          </label>
        ) : null}
        {kind === 'ray' ? (
          <label className="jobs-inline jobs-wide">
            <input type="checkbox" checked={rayTunnel} onChange={(e) => setRayTunnel(e.target.checked)} /> through an SSH tunnel to the head node
            <input
              value={rayAddress}
              size={30}
              title={rayTunnel ? 'The dashboard as the head node reaches it' : 'The dashboard address'}
              onChange={(e) => setRayAddress(e.target.value)}
            />
          </label>
        ) : null}
        {current ? <RecipeKnobs recipe={current} values={knobs} onChange={(k, v) => setKnobs((o) => ({ ...o, [k]: v }))} /> : null}
        <label className="jobs-wide">
          Environment variables (NAME=value per line)
          <textarea rows={3} value={envText} spellCheck={false} onChange={(e) => setEnvText(e.target.value)} data-testid="jobs-env" placeholder={current ? [...current.requiredEnv.filter((k) => !current.secretEnv.includes(k)), ...current.optionalEnv.slice(0, 2)].map((k) => `${k}=`).join('\n') : ''} />
        </label>
        <div className="jobs-wide jobs-secrets">
          <span>
            Secrets ({secretStore === 'keychain' ? 'sealed by the OS keychain' : 'kept in memory for this session only'}; never stored in the database, logs or files)
          </span>
          <div className="jobs-inline">
            <input placeholder="NAME" value={secretName} size={16} onChange={(e) => setSecretName(e.target.value)} data-testid="jobs-secret-name" />
            <input type="password" placeholder="value" value={secretValue} autoComplete="off" onChange={(e) => setSecretValue(e.target.value)} data-testid="jobs-secret-value" />
            <button type="button" onClick={() => void addSecret()} disabled={!secretName.trim()}>
              Set
            </button>
          </div>
          <div className="jobs-inline">
            {secretNames.map((n) => (
              <label key={n} className="jobs-chip">
                <input type="checkbox" checked={useSecrets.includes(n)} onChange={(e) => setUseSecrets((u) => (e.target.checked ? [...u, n] : u.filter((x) => x !== n)))} /> {n}
              </label>
            ))}
            {current?.secretEnv.filter((n) => !secretNames.includes(n)).map((n) => (
              <span key={n} className="muted jobs-chip">
                {n} (not set)
              </span>
            ))}
          </div>
        </div>
        <label className="jobs-wide jobs-inline">
          Pool to ship
          <select value={pool} onChange={(e) => setPool(e.target.value as typeof pool)} data-testid="jobs-pool">
            <option value="seed">the seed pack</option>
            <option value="ids">environments from memory (ids)</option>
            <option value="none">none</option>
          </select>
          {pool === 'ids' ? <input value={poolIds} placeholder="1, 2, 3" onChange={(e) => setPoolIds(e.target.value)} /> : null}
        </label>
      </div>
      {current ? <p className="muted jobs-desc">{current.description}</p> : null}
      {current && current.warnings.length > 0 ? (
        <div className="jobs-warning" role="note" data-testid="jobs-recipe-warning">
          {current.warnings.map((w) => (
            <p key={w}>⚠ {w}</p>
          ))}
        </div>
      ) : null}
      {hostKey ? (
        <div className={`jobs-hostkey ${hostKey.status}`} data-testid="jobs-hostkey">
          <p>{hostKey.message}</p>
          <code>
            {hostKey.keyType} {hostKey.fingerprint}
          </code>
          {hostKey.status === 'unknown' ? (
            <button type="button" className="primary" onClick={() => void trust()} data-testid="jobs-trust">
              Trust this key and connect
            </button>
          ) : null}
        </div>
      ) : null}
    </JobDialog>
  );
}
