import { lazy, type ComponentType } from 'react';
import type { Tab, TabKind, TargetOf } from '../store/workbench';

export interface ViewProps<K extends TabKind = TabKind> {
  tab: Tab & { target: TargetOf<K> };
  active: boolean;
}

/** Tab kinds -> the component that renders them. Features register their own kinds. */
const views = new Map<TabKind, ComponentType<ViewProps>>();

export function registerView<K extends TabKind>(kind: K, component: ComponentType<ViewProps<K>>): void {
  // Safe: MainArea renders a view only for tabs of the kind it was registered for.
  views.set(kind, component as unknown as ComponentType<ViewProps>);
}

export function viewFor(kind: TabKind): ComponentType<ViewProps> | undefined {
  return views.get(kind);
}

/**
 * A view loaded the first time a tab of its kind opens: the heavy ones (terminals, charts, the
 * stepper) stay out of the bundle the shell needs to start (host.first_render_ms).
 */
export function lazyView<K extends TabKind>(load: () => Promise<ComponentType<ViewProps<K>>>): ComponentType<ViewProps<K>> {
  return lazy(async () => ({ default: await load() }));
}
