/**
 * Actions other features offer on one environment (edit, audit, regret...). The library's detail
 * view shows them as buttons without importing those features, so each stays independent.
 */
export interface EnvRef {
  id: number;
  name: string;
  hash: string;
}

export interface EnvAction {
  id: string;
  label: string;
  run(env: EnvRef): void;
}

const actions: EnvAction[] = [];

export function registerEnvAction(action: EnvAction): void {
  if (!actions.some((a) => a.id === action.id)) actions.push(action);
}

export function envActions(): readonly EnvAction[] {
  return actions;
}
