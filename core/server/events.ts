import { parseEvent, type EventName, type EventPayload } from '../api';

type Listener = (name: EventName, payload: unknown) => void;

/**
 * Fan-out of contract events to every connected transport (IPC window, WebSocket clients, tests).
 * A payload outside its schema is a bug here: it is reported and not sent, as a call's result
 * outside its output schema is.
 */
export class EventBus {
  private listeners = new Set<Listener>();
  constructor(private readonly onInvalid: (problem: string) => void = (p) => console.error(`event not sent: ${p}`)) {}
  emit<E extends EventName>(name: E, payload: EventPayload<E>): void {
    const parsed = parseEvent(name, payload);
    if (!parsed.ok) {
      this.onInvalid(parsed.error);
      return;
    }
    for (const l of this.listeners) {
      try {
        l(name, parsed.payload);
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
