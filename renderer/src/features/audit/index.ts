import './audit.css';
import { useCommands } from '../../store/commands';
import { envIdOf, useWorkbench } from '../../store/workbench';
import { lazyView, registerView } from '../../views/registry';
import { registerEnvAction } from '../../views/envActions';
import { openAudit, openAuditDashboard } from './open';
import { backend, useApp } from '../../store/app';
import { auditsChanged, refreshAuditProblems, runAudit } from '../../store/auditResults';
import { loadEnvironment, useEnvironments, watchEnvironments } from '../../store/environments';
import { attempt } from '../../store/report';

export { openAudit, openAuditDashboard };
export { applyAuditMarkers, auditMarkers } from './markers';
export { useAuditResults, loadAudit } from '../../store/auditResults';

/** Opens the audit of an environment and audits its head as it is now (not the hash a tab opened on). */
async function auditEnvironmentNow(envId: number, name: string): Promise<void> {
  openAudit(envId, name);
  await attempt('audit', `Audit of ${name}`, async () => runAudit((await loadEnvironment(envId)).hash));
}

export function registerAuditFeature(): void {
  registerEnvAction({ id: 'audit', label: 'Audit', run: (e) => openAudit(e.id, e.name) });
  registerView('audit', lazyView(() => import('./AuditView').then((m) => m.AuditView)));
  registerView('audit-dashboard', lazyView(() => import('./Dashboard').then((m) => m.AuditDashboard)));
  useCommands.getState().register([
    { id: 'audit.dashboard', category: 'Audit', title: 'Show Pool Audit Dashboard', run: openAuditDashboard },
    {
      id: 'audit.environment',
      category: 'Audit',
      title: 'Audit This Environment',
      run: () => {
        const wb = useWorkbench.getState();
        const tab = wb.tabs.find((t) => t.id === wb.activeTabId);
        const id = envIdOf(tab?.target);
        const name = (tab?.title ?? '').replace(/^(Audit|Write back): /, '');
        if (tab && id !== null) void auditEnvironmentNow(id, name);
        else openAuditDashboard();
      },
    },
  ]);

  // Problems lists failing environments: at start, and whenever a batch ends.
  let listed = false;
  const list = () => {
    if (listed) return;
    listed = true;
    void refreshAuditProblems();
  };
  if (useApp.getState().connection === 'connected') list();
  useApp.subscribe((st) => {
    if (st.connection === 'connected') list();
  });
  backend().on('audit.progress', (p) => {
    if (p.state !== 'running') auditsChanged();
  });
  // A sweep with the full check set stores each result as the version's audit too.
  backend().on('audit.sweepProgress', (p) => {
    if (p.state !== 'running') auditsChanged();
  });
  // A save moves a head off (or onto) a failing version.
  let timer: ReturnType<typeof setTimeout> | undefined;
  watchEnvironments();
  useEnvironments.subscribe((now, before) => {
    if (now.change.seq === before.change.seq) return;
    clearTimeout(timer);
    timer = setTimeout(() => void refreshAuditProblems(), 500);
  });
}
