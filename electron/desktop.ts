// The desktop shell's decisions, as plain functions over the few Electron objects they touch, so
// they run (and are tested) in Node. This file must not import 'electron': main.ts passes the real
// objects in, tests pass a stand-in (tests/helpers/electronStandIn.ts).
import { ApiError } from '../core/api';
import { validateExternalUrl } from '../core/handlers/app';
import { contentSecurityPolicy } from '../core/host/csp';
import { readStatic } from '../core/host/staticFiles';
import type { Sealer } from '../core/jobs/secrets';
import { toApiError, type Dispatch } from '../core/server/dispatcher';
import type { WindowState } from './windowState';

export const APP_SCHEME = 'app';
export const APP_HOST = 'workbench';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

// ---- IPC ----

export interface IpcEventLike {
  senderFrame: { url: string } | null | undefined;
}

export type IpcReply = { ok: true; value: unknown } | { ok: false; error: ReturnType<ApiError['toJSON']> };

/**
 * Only our own page may call the engine: a frame from anywhere else (an injected iframe, a navigated
 * window) is refused. Scheme and host are compared, not `URL.origin`: for a custom scheme the WHATWG
 * origin is the opaque "null", so comparing origins refused the app's own page.
 */
export function isTrustedSender(event: IpcEventLike, origin = APP_ORIGIN): boolean {
  const url = event.senderFrame?.url;
  if (!url) return false;
  try {
    const u = new URL(url);
    const o = new URL(origin);
    return u.protocol === o.protocol && u.host === o.host && !u.username && !u.password;
  } catch {
    return false;
  }
}

/** The `spade:call` handler: sender checked, then the one dispatcher (which always rejects with an ApiError). */
export function ipcCallHandler(dispatch: Dispatch, origin = APP_ORIGIN): (event: IpcEventLike, name: unknown, input: unknown) => Promise<IpcReply> {
  return async (event, name, input) => {
    if (!isTrustedSender(event, origin)) {
      return { ok: false, error: new ApiError('unauthorized', 'Calls are only accepted from the workbench page').toJSON() };
    }
    try {
      return { ok: true, value: await dispatch(name, input, { transport: 'electron' }) };
    } catch (e) {
      return { ok: false, error: toApiError(e, String(name).slice(0, 200), () => {}).toJSON() };
    }
  };
}

// ---- app:// protocol ----

/** Serves the built renderer on app://workbench with the same CSP as the web host; nothing else answers. */
export function appProtocolHandler(rendererRoot: string): (request: { url: string }) => Promise<Response> {
  return async (request) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return new Response('Bad request', { status: 400 });
    }
    if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return new Response('Not found', { status: 404 });
    const file = await readStatic(rendererRoot, url.pathname);
    if (!file) return new Response('Not found', { status: 404 });
    return new Response(new Uint8Array(file.body), {
      headers: { 'Content-Type': file.contentType, 'Content-Security-Policy': contentSecurityPolicy, 'X-Content-Type-Options': 'nosniff' },
    });
  };
}

// ---- navigation, popups, external links ----

export interface ShellLike {
  openExternal(url: string): Promise<void>;
}

/** Opens a plain web link in the system browser; anything else (file:, javascript:, custom schemes) throws. */
export async function openExternalLink(shell: ShellLike, url: string): Promise<void> {
  await shell.openExternal(validateExternalUrl(url).toString());
}

export interface PreventableEvent {
  preventDefault(): void;
}

export interface WebContentsLike {
  on(event: 'will-navigate', listener: (e: PreventableEvent, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (e: PreventableEvent) => void): unknown;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' } | { action: 'allow' }): void;
}

/**
 * The page never leaves our origin: navigation elsewhere is cancelled, new windows are denied (a
 * web link goes to the system browser instead), and webviews cannot be attached.
 */
export function confineWebContents(contents: WebContentsLike, shell: ShellLike, origin = APP_ORIGIN, onRefused?: (url: string, why: string) => void): void {
  contents.on('will-navigate', (e, url) => {
    if (!url.startsWith(`${origin}/`)) {
      e.preventDefault();
      onRefused?.(url, 'navigation outside the app');
    }
  });
  contents.setWindowOpenHandler(({ url }) => {
    openExternalLink(shell, url).catch(() => onRefused?.(url, 'not a web link'));
    return { action: 'deny' };
  });
  contents.on('will-attach-webview', (e) => {
    e.preventDefault();
    onRefused?.('', 'webview');
  });
}

// ---- window state ----

export interface DisplayLike {
  workArea: { x: number; y: number; width: number; height: number };
}

/** Where to open the window: the saved place only if some display still shows (most of) it. */
export function windowPlacement(state: WindowState, displays: DisplayLike[]): { width: number; height: number; x?: number; y?: number } {
  const { x, y } = state;
  const visible =
    x !== undefined &&
    y !== undefined &&
    displays.some(({ workArea: b }) => x >= b.x - 50 && y >= b.y - 50 && x < b.x + b.width && y < b.y + b.height);
  return { width: state.width, height: state.height, ...(visible ? { x, y } : {}) };
}

export interface WindowLike {
  isDestroyed(): boolean;
  isMaximized(): boolean;
  getNormalBounds(): { x: number; y: number; width: number; height: number };
  on(event: 'close', listener: () => void): unknown;
}

/** Remembers the window's normal bounds and maximised state when it closes. */
export function rememberWindowState(win: WindowLike, save: (s: WindowState) => void): void {
  win.on('close', () => {
    if (win.isDestroyed()) return;
    const b = win.getNormalBounds();
    save({ x: b.x, y: b.y, width: b.width, height: b.height, maximized: win.isMaximized() });
  });
}

// ---- secrets ----

export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(sealed: Buffer): string;
  /** Linux only: 'basic_text' means no keyring was found and "encryption" is a fixed key. */
  getSelectedStorageBackend?(): string;
}

/**
 * The keychain sealer for job secrets, or undefined when there is no real keychain: then secrets
 * stay in memory for the session rather than being written under a key anyone can read.
 */
export function keychainSealer(safeStorage: SafeStorageLike, platform = process.platform): Sealer | undefined {
  if (!safeStorage.isEncryptionAvailable()) return undefined;
  if (platform === 'linux' && safeStorage.getSelectedStorageBackend?.() === 'basic_text') return undefined;
  return { encrypt: (p) => safeStorage.encryptString(p), decrypt: (b) => safeStorage.decryptString(b) };
}
