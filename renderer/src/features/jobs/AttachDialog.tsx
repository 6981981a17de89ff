import { useState } from 'react';
import type { AttachInput } from '../../../../core/api/calls/jobs';
import { spadeRunOutputs } from '../../../../core/api/spadeRun';
import { backend } from '../../store/app';
import { JobDialog, KeyFileField, sshTargetOf, useJobStart } from './JobDialog';

/**
 * Follow a job the workbench did not launch: SPADE's own `spade_games_8b_<pid>` on a Ray head, or
 * any Slurm job id. Its log and metrics are followed; with the run's folders, its environments too.
 */
export function AttachDialog({ onClose }: { onClose: () => void }) {
  const [kind, setKind] = useState<AttachInput['backend']>('ray');
  const [externalId, setExternalId] = useState('');
  const [name, setName] = useState('');
  const [rayAddress, setRayAddress] = useState('http://127.0.0.1:8265');
  const [tunnel, setTunnel] = useState(true);
  const [host, setHost] = useState('');
  const [port, setPort] = useState('');
  const [user, setUser] = useState('');
  const [keyFile, setKeyFile] = useState('');
  const [outputDir, setOutputDir] = useState('');
  const { busy, error, start } = useJobStart(onClose);

  const submit = () =>
    start(() => {
      const input: AttachInput = { name: name.trim() || externalId.trim(), backend: kind, externalId: externalId.trim() };
      const ssh = sshTargetOf(host, port, user, keyFile);
      if (ssh) input.ssh = ssh;
      if (kind === 'ray') input.ray = { address: rayAddress.trim(), tunnel: tunnel && Boolean(input.ssh) };
      // SPADE's layout under OUTPUT_DIR: games, the cache with its steps and env_memory.json, rejected games beside the games.
      if (outputDir.trim()) input.outputs = spadeRunOutputs(outputDir);
      return backend().call('jobs.attach', input);
    });

  return (
    <JobDialog
      title="Attach to a running job"
      testId="jobs-attach"
      onSubmit={() => void submit()}
      onClose={onClose}
      error={error}
      submit={{ label: 'Attach', busyLabel: 'Attaching…', busy, disabled: busy || !externalId.trim(), testId: 'jobs-attach-submit' }}
    >
      <div className="jobs-grid">
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value as AttachInput['backend'])} data-testid="jobs-attach-kind">
            <option value="ray">Ray job (submission id)</option>
            <option value="slurm">Slurm job (job id)</option>
          </select>
        </label>
        <label>
          {kind === 'ray' ? 'Submission id (e.g. spade_games_8b_12345)' : 'Slurm job id'}
          <input value={externalId} onChange={(e) => setExternalId(e.target.value)} data-testid="jobs-attach-id" required />
        </label>
        <label>
          Name
          <input value={name} placeholder={externalId} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          SSH host {kind === 'ray' ? '(for a tunnel to the head node and its files)' : ''}
          <input value={host} onChange={(e) => setHost(e.target.value)} data-testid="jobs-attach-host" />
        </label>
        <label className="jobs-inline">
          Port <input value={port} size={6} onChange={(e) => setPort(e.target.value.replace(/\D/g, ''))} />
          User <input value={user} size={10} onChange={(e) => setUser(e.target.value)} />
        </label>
        <KeyFileField value={keyFile} onChange={setKeyFile} testId="jobs-attach-keyfile" />
        {kind === 'ray' ? (
          <label className="jobs-inline jobs-wide">
            Dashboard <input value={rayAddress} size={30} onChange={(e) => setRayAddress(e.target.value)} data-testid="jobs-attach-address" />
            <input type="checkbox" checked={tunnel} onChange={(e) => setTunnel(e.target.checked)} /> through the SSH host
          </label>
        ) : null}
        <label className="jobs-wide">
          The run's OUTPUT_DIR on that machine (optional: environments and metrics.jsonl flow back)
          <input value={outputDir} onChange={(e) => setOutputDir(e.target.value)} />
        </label>
      </div>
    </JobDialog>
  );
}
