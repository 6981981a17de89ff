import { updateSettings, useApp } from '../store/app';
import type { ViewProps } from './registry';
import type { RuntimeKind } from '../../../core/api';

export function SettingsView(_props: ViewProps<'settings'>) {
  const settings = useApp((s) => s.settings);
  const info = useApp((s) => s.info);
  if (!settings) return <div className="pad muted">Loading settings…</div>;
  return (
    <div className="settings pad">
      <h2>Settings</h2>
      <div className="form-grid">
        <label htmlFor="set-theme">Theme</label>
        <select id="set-theme" value={settings.theme} onChange={(e) => void updateSettings({ theme: e.target.value as typeof settings.theme })}>
          <option value="system">Follow the system</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
        <label htmlFor="set-timeout">Time limit per call (s)</label>
        <input
          id="set-timeout"
          type="number"
          min={1}
          max={600}
          value={settings.stepTimeoutSec}
          onChange={(e) => Number(e.target.value) >= 1 && void updateSettings({ stepTimeoutSec: Number(e.target.value) })}
        />
        <label htmlFor="set-turns">Turn budget (max_turns)</label>
        <input
          id="set-turns"
          type="number"
          min={1}
          value={settings.maxTurns}
          onChange={(e) => Number(e.target.value) >= 1 && void updateSettings({ maxTurns: Number(e.target.value) })}
        />
        <label htmlFor="set-runtime">Default runtime</label>
        <select id="set-runtime" value={settings.defaultRuntime} onChange={(e) => void updateSettings({ defaultRuntime: e.target.value as RuntimeKind })}>
          <option value="pyodide">Pyodide (sandboxed)</option>
          <option value="cpython">Native CPython (in bubblewrap)</option>
        </select>
        <label htmlFor="set-audit-runtime">Audits run in</label>
        <select id="set-audit-runtime" value={settings.auditRuntime} onChange={(e) => void updateSettings({ auditRuntime: e.target.value as RuntimeKind })}>
          <option value="pyodide">Pyodide (sandboxed; games that need numpy go native)</option>
          <option value="cpython">Native CPython (in bubblewrap)</option>
        </select>
        <label htmlFor="set-unsandboxed">Native runs without an OS sandbox</label>
        <span>
          <input
            id="set-unsandboxed"
            type="checkbox"
            checked={settings.allowUnsandboxedNative}
            onChange={(e) => void updateSettings({ allowUnsandboxedNative: e.target.checked })}
          />{' '}
          <span className="muted">allowUnsandboxedNative: only where bubblewrap is missing; environment code then reaches this machine</span>
        </span>
        <label htmlFor="set-spade-src">SPADE checkout</label>
        <span>
          <input
            id="set-spade-src"
            type="text"
            className="mono"
            size={40}
            placeholder="none: the workbench's own designer template"
            defaultValue={settings.spadeSrc ?? ''}
            onBlur={(e) => e.target.value.trim() !== (settings.spadeSrc ?? '') && void updateSettings({ spadeSrc: e.target.value.trim() || null })}
            data-testid="set-spade-src"
          />{' '}
          <span className="muted">spadeSrc: design rounds read SPADE&rsquo;s prompts, skills and hint prompts from this folder at run time (never copied)</span>
        </span>
        <span>Data directory</span>
        <span className="mono" data-testid="data-dir">{info?.dataDir}</span>
        <span>Database</span>
        <span className="mono">{info?.databasePath}</span>
      </div>
    </div>
  );
}
