import type { ReactNode } from 'react';
import { useCall } from '../../store/useCall';
import type { JobSummary, LaunchInput } from '../../../../core/api/calls/jobs';
import { openJob } from './JobsPanel';
import { useJobs } from './store';
import { useEscape } from '../../components/useEscape';

/**
 * The SSH target a dialog's host, port, user and key-file fields name, or none without a host. The key
 * file is a path on the workbench's machine; the engine expands its `~`.
 */
export function sshTargetOf(host: string, port: string, user: string, keyFile = ''): NonNullable<LaunchInput['ssh']> | undefined {
  if (!host.trim()) return undefined;
  return {
    host: host.trim(),
    ...(port ? { port: Number(port) } : {}),
    ...(user.trim() ? { user: user.trim() } : {}),
    ...(keyFile.trim() ? { identityFile: keyFile.trim() } : {}),
  };
}

/** The key-file field both job dialogs share. */
export function KeyFileField({ value, onChange, testId }: { value: string; onChange: (v: string) => void; testId: string }) {
  return (
    <label className="jobs-wide" title="A private key on the workbench's machine. Left empty: ~/.ssh/config, the SSH agent, then ~/.ssh/id_*">
      Key file (optional; ~ is the workbench machine's home)
      <input value={value} placeholder="~/.ssh/id_ed25519" spellCheck={false} autoComplete="off" onChange={(e) => onChange(e.target.value)} data-testid={testId} />
    </label>
  );
}

/**
 * What starting a job from a dialog does, launched or attached (useCall's busy and error line): a
 * started job listed, opened and the dialog closed. `fn` answers null when it stopped short on
 * purpose (a validation message, a host key to confirm first).
 */
export function useJobStart(onClose: () => void) {
  const { busy, error, setError, run } = useCall('jobs');
  const start = async (fn: () => Promise<JobSummary | null>): Promise<void> => {
    const job = await run('Start job', fn);
    if (!job) return;
    useJobs.getState().upsert(job);
    openJob(job.id, job.name);
    onClose();
  };
  return { busy: busy !== null, error: error ?? '', setError, start };
}

/** The frame both job dialogs share: a modal form with a title, the error line, Cancel and the submit button. */
export function JobDialog(props: {
  title: string;
  testId: string;
  onSubmit: () => void;
  onClose: () => void;
  error: string;
  submit: { label: string; busyLabel: string; busy: boolean; disabled: boolean; testId: string };
  children: ReactNode;
}) {
  const { submit } = props;
  // Esc does what Cancel does, as in every dialog (components/useEscape).
  useEscape(props.onClose);
  return (
    <div className="jobs-dialog-backdrop" role="dialog" aria-modal="true" aria-label={props.title}>
      <form
        className="jobs-dialog"
        data-testid={props.testId}
        onSubmit={(e) => {
          e.preventDefault();
          props.onSubmit();
        }}
      >
        <h2>{props.title}</h2>
        {props.children}
        {props.error ? (
          <p className="jobs-error" role="alert" data-testid="jobs-error">
            {props.error}
          </p>
        ) : null}
        <div className="jobs-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={submit.disabled} data-testid={submit.testId}>
            {submit.busy ? submit.busyLabel : submit.label}
          </button>
        </div>
      </form>
    </div>
  );
}
