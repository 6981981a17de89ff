import { backend, useApp } from '../store/app';
import { useCall } from '../store/useCall';

/**
 * A path on the machine running the workbench. `~` is the user's home there (the engine expands it,
 * core/handlers/paths.ts). "Choose…" appears only where the backend offers a native picker (the
 * desktop app): a browser's picker would name files on the wrong machine.
 */
export function PathField(props: {
  value: string;
  onChange: (v: string) => void;
  label: string;
  placeholder?: string;
  folders?: boolean;
  disabled?: boolean;
  testId?: string;
  className?: string;
}) {
  const picker = useApp((s) => s.info?.picker === true);
  const { error, run } = useCall('paths');
  const choose = () =>
    run('Choose a path', async () => {
      const r = await backend().call('app.pickPaths', { title: props.label, folders: props.folders ?? true, multiple: false });
      if (r.paths[0]) props.onChange(r.paths[0]);
    });
  return (
    <span className={`path-field ${props.className ?? ''}`}>
      <input
        aria-label={props.label}
        placeholder={props.placeholder ?? '~/folder or /absolute/path'}
        title="A path on the machine running the workbench; ~ is your home folder there"
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        disabled={props.disabled}
        data-testid={props.testId}
        spellCheck={false}
      />
      {picker ? (
        <button type="button" onClick={() => void choose()} disabled={props.disabled} data-testid={props.testId ? `${props.testId}-choose` : undefined}>
          Choose…
        </button>
      ) : null}
      {error ? (
        <span className="path-field-error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}
