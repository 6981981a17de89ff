import type { Backend } from '../../../core/api';
import { createWsBackend } from '../../../core/api/wsClient';
import { createElectronBackend, electronBridge } from './electronBackend';

/** Picks the transport once at start-up; nothing else in the UI knows which one it got. */
export function createBackend(): Backend {
  const bridge = electronBridge();
  if (bridge) return createElectronBackend(bridge);
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = new URLSearchParams(location.search).get('token');
  const url = `${proto}//${location.host}/api/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
  return createWsBackend({ url });
}
