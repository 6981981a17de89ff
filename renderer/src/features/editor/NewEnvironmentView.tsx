import { useState } from 'react';
import { backend, log } from '../../store/app';
import { useWorkbench } from '../../store/workbench';
import type { ViewProps } from '../../views/registry';
import { openEditor } from './open';
import { GAME_TEMPLATE, TOOL_USE_TEMPLATE, expandSnippet } from './snippets';
import { useCall } from '../../store/useCall';
import { ErrorText } from '../../components/ErrorText';

type Mode = 'game' | 'tool-use' | 'paste' | 'file';

function templateFor(mode: Mode): string {
  if (mode === 'game') return expandSnippet(GAME_TEMPLATE);
  if (mode === 'tool-use') return expandSnippet(TOOL_USE_TEMPLATE);
  return '';
}

/** A new environment from a snippet, a file, or pasted text; it opens in the editor once stored. */
export function NewEnvironmentView({ tab }: ViewProps<'editor-new'>) {
  const initialMode: Mode = tab.target.mode;
  const [mode, setMode] = useState<Mode>(initialMode);
  const [source, setSource] = useState(templateFor(initialMode));
  const [fileName, setFileName] = useState<string | undefined>();
  const [skill, setSkill] = useState('');
  const [hint, setHint] = useState('');
  const { busy, error, setError, run } = useCall('editor');

  const choose = (m: Mode) => {
    setMode(m);
    setError(null);
    if (m === 'game' || m === 'tool-use') setSource(templateFor(m));
    else if (mode === 'game' || mode === 'tool-use') setSource('');
  };

  const create = async () => {
    if (!source.trim()) {
      setError('The source is empty.');
      return;
    }
    await run('Create', async () => {
      const r = await backend().call('editor.create', {
        source,
        origin: mode === 'paste' ? 'paste' : mode === 'file' ? 'file' : 'snippet',
        ...(mode === 'tool-use' ? { kind: 'tool-use' as const } : {}),
        ...(fileName && mode === 'file' ? { fileName } : {}),
        ...(skill.trim() ? { skill: skill.trim() } : {}),
        ...(hint.trim() ? { hint: hint.trim() } : {}),
      });
      const { env } = await backend().call('editor.open', { envId: r.envId });
      log('info', 'editor', `Created environment ${r.envId} (${env.name})`);
      useWorkbench.getState().closeTab(tab.id);
      openEditor(r.envId, env.name);
    });
  };

  return (
    <div className="fill column new-env pad" data-testid="new-env">
      <h2>New environment</h2>
      <div className="row" role="radiogroup" aria-label="Start from">
        {(
          [
            ['game', 'Cognitive game snippet'],
            ['tool-use', 'Tool-use snippet'],
            ['paste', 'Paste'],
            ['file', 'File'],
          ] as const
        ).map(([m, label]) => (
          <label key={m}>
            <input type="radio" name="new-env-mode" checked={mode === m} onChange={() => choose(m)} /> {label}
          </label>
        ))}
      </div>
      {mode === 'file' ? (
        <input
          type="file"
          accept=".py,text/x-python,text/plain"
          aria-label="Environment file"
          onChange={async (e) => {
            const f = e.target.files?.[0];
            if (!f) return;
            if (f.size > 4_000_000) {
              setError(`${f.name} is larger than 4 MB`);
              return;
            }
            setFileName(f.name);
            setSource(await f.text());
          }}
        />
      ) : null}
      <textarea
        className="new-env-source"
        aria-label="Environment source"
        spellCheck={false}
        placeholder={mode === 'paste' ? 'Paste the environment program here' : ''}
        value={source}
        onChange={(e) => setSource(e.target.value)}
      />
      <div className="row">
        <label>
          Skill <input aria-label="New skill" value={skill} onChange={(e) => setSkill(e.target.value)} />
        </label>
        <label className="fill">
          Hint <input aria-label="New hint" className="fill" value={hint} onChange={(e) => setHint(e.target.value)} />
        </label>
        <button onClick={() => void create()} disabled={busy !== null}>
          {busy ? 'Creating…' : 'Create'}
        </button>
      </div>
      <ErrorText error={error} />
    </div>
  );
}
