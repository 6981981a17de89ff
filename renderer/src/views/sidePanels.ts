import type { ComponentType } from 'react';
import type { Activity } from '../store/workbench';

/** Each activity (Library, Episodes, Jobs) shows one side panel; features register theirs. */
const panels = new Map<Activity, ComponentType>();

export function registerSidePanel(activity: Activity, component: ComponentType): void {
  panels.set(activity, component);
}

export function sidePanelFor(activity: Activity): ComponentType | undefined {
  return panels.get(activity);
}

/** Contributions to the status bar, right of the backend indicator (runtime pool, jobs...). */
const statusItems: ComponentType[] = [];
export function registerStatusItem(component: ComponentType): void {
  statusItems.push(component);
}
export function statusBarItems(): ComponentType[] {
  return statusItems;
}
