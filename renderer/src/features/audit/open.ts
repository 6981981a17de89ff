import { useWorkbench } from '../../store/workbench';

export function openAudit(envId: number, name: string): void {
  useWorkbench.getState().openTab({ id: `audit:${envId}`, kind: 'audit', title: `Audit: ${name}`, params: { id: String(envId) } });
}

export function openAuditDashboard(): void {
  useWorkbench.getState().openTab({ id: 'audit-dashboard', kind: 'audit-dashboard', title: 'Pool audit' });
}
