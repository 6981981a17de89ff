import type { ComponentType } from 'react';
import type { Tab } from '../store/workbench';

export interface ViewProps {
  tab: Tab;
  active: boolean;
}

/** Tab kinds -> the component that renders them. Features register their own kinds. */
const views = new Map<string, ComponentType<ViewProps>>();

export function registerView(kind: string, component: ComponentType<ViewProps>): void {
  views.set(kind, component);
}

export function viewFor(kind: string): ComponentType<ViewProps> | undefined {
  return views.get(kind);
}
