import { useWorkbench } from '../../store/workbench';

export function openAudit(envId: number, name: string): void {
  useWorkbench.getState().openTab({ kind: 'audit', envId }, `Audit: ${name}`);
}

export function openAuditDashboard(): void {
  useWorkbench.getState().openTab({ kind: 'audit-dashboard' }, 'Pool audit');
}
