// The only bridge between the sandboxed page and the engine. It exposes exactly the contract's
// call and event names (derived from core/api, so nothing else is reachable) and no Node objects.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { callNames, eventNames } from '../core/api/names';

const allowedCalls = new Set<string>(callNames);
const allowedEvents = new Set<string>(eventNames);

contextBridge.exposeInMainWorld('spadeBridge', {
  call(name: string, input: unknown): Promise<unknown> {
    if (!allowedCalls.has(name)) return Promise.reject(new Error(`Call not allowed: ${String(name)}`));
    return ipcRenderer.invoke('spade:call', name, input);
  },
  on(event: string, listener: (payload: unknown) => void): () => void {
    if (!allowedEvents.has(event)) throw new Error(`Event not allowed: ${String(event)}`);
    const wrapped = (_e: IpcRendererEvent, name: string, payload: unknown) => {
      if (name === event) listener(payload);
    };
    ipcRenderer.on('spade:event', wrapped);
    return () => ipcRenderer.off('spade:event', wrapped);
  },
});
