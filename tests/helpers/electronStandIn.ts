// STAND-IN, NOT ELECTRON. No Electron binary can be downloaded here, so the desktop shell's logic
// (electron/desktop.ts) is exercised against these minimal objects with the same method names and
// event semantics as the few Electron APIs it touches: WebContents events and window-open handler,
// a BrowserWindow's bounds and close event, shell.openExternal, and safeStorage. Everything else in
// those tests is real (the dispatcher, Services, SQLite, files on disk, WHATWG Response).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

type Listener = (...args: never[]) => void;

class Emitter {
  private listeners = new Map<string, Listener[]>();
  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  emit(event: string, ...args: unknown[]): void {
    for (const l of this.listeners.get(event) ?? []) (l as (...a: unknown[]) => void)(...args);
  }
}

/** What Electron hands a 'will-navigate' or 'will-attach-webview' listener. */
export class StandInEvent {
  defaultPrevented = false;
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

export class StandInWebContents extends Emitter {
  private openHandler: ((d: { url: string }) => { action: 'deny' } | { action: 'allow' }) | null = null;
  setWindowOpenHandler(h: (d: { url: string }) => { action: 'deny' } | { action: 'allow' }): void {
    this.openHandler = h;
  }
  /** Like a page calling window.open(url): returns what the handler decided (Electron allows when none is set). */
  windowOpen(url: string): 'deny' | 'allow' {
    return this.openHandler ? this.openHandler({ url }).action : 'allow';
  }
  /** Like the page navigating: true when the navigation would go ahead. */
  navigate(url: string): boolean {
    const e = new StandInEvent();
    this.emit('will-navigate', e, url);
    return !e.defaultPrevented;
  }
  attachWebview(): boolean {
    const e = new StandInEvent();
    this.emit('will-attach-webview', e, {}, {});
    return !e.defaultPrevented;
  }
}

export class StandInWindow extends Emitter {
  destroyed = false;
  maximized = false;
  bounds = { x: 100, y: 80, width: 1200, height: 800 };
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isMaximized(): boolean {
    return this.maximized;
  }
  getNormalBounds(): { x: number; y: number; width: number; height: number } {
    return { ...this.bounds };
  }
  close(): void {
    this.emit('close');
    this.destroyed = true;
  }
}

export class StandInShell {
  opened: string[] = [];
  async openExternal(url: string): Promise<void> {
    this.opened.push(url);
  }
}

/** Seals with AES-GCM under a per-instance key, standing in for the OS keychain. */
export class StandInSafeStorage {
  private key = randomBytes(32);
  constructor(
    private available = true,
    private backend = 'gnome_libsecret',
  ) {}
  isEncryptionAvailable(): boolean {
    return this.available;
  }
  getSelectedStorageBackend(): string {
    return this.backend;
  }
  encryptString(plain: string): Buffer {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]);
  }
  decryptString(sealed: Buffer): string {
    const d = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, 12));
    d.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([d.update(sealed.subarray(28)), d.final()]).toString('utf8');
  }
}
