import type { EventName, EventPayload } from '../api';

type Listener = (name: EventName, payload: unknown) => void;

/** Fan-out of contract events to every connected transport (IPC window, WebSocket clients, tests). */
export class EventBus {
  private listeners = new Set<Listener>();
  emit<E extends EventName>(name: E, payload: EventPayload<E>): void {
    for (const l of this.listeners) {
      try {
        l(name, payload);
      } catch {
        // A broken subscriber (a closed socket, say) must not stop the others.
      }
    }
  }
  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}
