import type { CallInput, CallName, CallOutput, EventName, EventPayload } from './index';

/**
 * What the renderer is handed at start-up. It never learns which transport sits behind it
 * (Electron IPC, WebSocket, or in-process), so the UI is tested once and ships three ways.
 */
export interface Backend {
  readonly transport: 'electron' | 'websocket' | 'in-process';
  call<N extends CallName>(name: N, input: CallInput<N>): Promise<CallOutput<N>>;
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
  /** Connection state changes (the WebSocket can drop and come back; the others never change). */
  onConnection(listener: (state: 'connected' | 'reconnecting' | 'closed') => void): () => void;
  close(): void;
}
