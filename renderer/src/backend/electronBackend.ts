import { ApiError, parseEvent, type Backend } from '../../../core/api';

interface Bridge {
  call(name: string, input: unknown): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>;
  on(event: string, listener: (payload: unknown) => void): () => void;
}

export function electronBridge(): Bridge | undefined {
  return (window as unknown as { spadeBridge?: Bridge }).spadeBridge;
}

/** The desktop transport: the preload's allowlisted bridge in front of ipcMain. */
export function createElectronBackend(bridge: Bridge): Backend {
  return {
    transport: 'electron',
    async call(name, input) {
      const reply = await bridge.call(name, input);
      if (reply.ok) return reply.value as never;
      throw ApiError.from(reply.error);
    },
    on(event, listener) {
      const l = listener as (p: unknown) => void;
      return bridge.on(event, (payload) => {
        const parsed = parseEvent(event, payload);
        if (parsed.ok) l(parsed.payload);
      });
    },
    onConnection() {
      return () => {};
    },
    close() {},
  };
}
