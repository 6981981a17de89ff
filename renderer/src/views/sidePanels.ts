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

/**
 * Contributions to the status bar, right of the backend indicator (runtime pool, jobs...). An item
 * that shows a backend component in detail names it in `replaces`, so it is not listed twice.
 */
const statusItems: ComponentType[] = [];
const replaced = new Set<string>();
export function registerStatusItem(component: ComponentType, opts: { replaces?: string } = {}): void {
  statusItems.push(component);
  if (opts.replaces) replaced.add(opts.replaces);
}
export function statusBarItems(): ComponentType[] {
  return statusItems;
}
export function isComponentReplaced(name: string): boolean {
  return replaced.has(name);
}
