import './audit.css';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { registerView } from '../../views/registry';
import { registerEnvAction } from '../../views/envActions';
import { AuditView } from './AuditView';
import { AuditDashboard } from './Dashboard';
import { openAudit, openAuditDashboard } from './open';

export { openAudit, openAuditDashboard };
export { applyAuditMarkers, auditMarkers } from './markers';

export function registerAuditFeature(): void {
  registerEnvAction({ id: 'audit', label: 'Audit', run: (e) => openAudit(e.id, e.name) });
  registerView('audit', AuditView);
  registerView('audit-dashboard', AuditDashboard);
  useCommands.getState().register([
    { id: 'audit.dashboard', category: 'Audit', title: 'Show Pool Audit Dashboard', run: openAuditDashboard },
    {
      id: 'audit.environment',
      category: 'Audit',
      title: 'Audit This Environment',
      run: () => {
        const wb = useWorkbench.getState();
        const tab = wb.tabs.find((t) => t.id === wb.activeTabId);
        const id = tab?.params.id ?? tab?.params.envId;
        if (tab && (tab.kind === 'environment' || tab.kind === 'editor') && id && /^\d+$/.test(id)) openAudit(Number(id), tab.title);
        else openAuditDashboard();
      },
    },
  ]);
}
