import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers } from '../../core/handlers';
import { KeychainSecretStore } from '../../core/jobs/secrets';
import { createDispatcher } from '../../core/server/dispatcher';
import { Services } from '../../core/services/services';
import { APP_ORIGIN, appProtocolHandler, confineWebContents, ipcCallHandler, isTrustedSender, keychainSealer, openExternalLink, rememberWindowState, windowPlacement } from '../../electron/desktop';
import { loadWindowState, saveWindowState } from '../../electron/windowState';
import { StandInSafeStorage, StandInShell, StandInWebContents, StandInWindow } from '../helpers/electronStandIn';
import { tempDir } from '../helpers/tmp';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
function tmp() {
  const t = tempDir('spade-desktop-');
  cleanups.push(t.cleanup);
  return t.dir;
}

describe('desktop shell (electron/desktop.ts, against a stand-in of Electron)', () => {
  it('answers IPC calls only from the app:// page, through the real dispatcher', async () => {
    const services = new Services({ dataDir: tmp(), shell: 'electron' });
    cleanups.push(() => services.close());
    const handle = ipcCallHandler(createDispatcher(createHandlers(services), () => {}));
    const ok = await handle({ senderFrame: { url: `${APP_ORIGIN}/index.html` } }, 'app.info', {});
    expect(ok).toMatchObject({ ok: true, value: { shell: 'electron' } });
    for (const url of ['https://evil.example/', 'app://other/index.html', 'file:///etc/passwd', 'not a url', '']) {
      const r = await handle({ senderFrame: { url } }, 'app.info', {});
      expect(r, url).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    }
    expect(await handle({ senderFrame: null }, 'app.info', {})).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await handle({ senderFrame: { url: `${APP_ORIGIN}/` } }, 'no.such', {})).toMatchObject({ ok: false, error: { code: 'unknown_call' } });
    expect(await handle({ senderFrame: { url: `${APP_ORIGIN}/` } }, 'memory.get', { id: 424242 })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(isTrustedSender({ senderFrame: { url: 'app://workbench.evil/x' } })).toBe(false);
    expect(isTrustedSender({ senderFrame: { url: 'app://user@workbench/x' } })).toBe(false);
    expect(new URL(`${APP_ORIGIN}/index.html`).origin).toBe('null'); // why the check compares scheme and host
  });

  it('serves the built renderer on app://workbench with the CSP, and nothing else', async () => {
    const root = tmp();
    mkdirSync(join(root, 'assets'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>wb</title>');
    writeFileSync(join(root, 'assets', 'app.js'), 'console.log(1)');
    const serve = appProtocolHandler(root);
    const page = await serve({ url: 'app://workbench/index.html' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<title>wb</title>');
    expect((await serve({ url: 'app://workbench/assets/app.js' })).headers.get('content-type')).toContain('javascript');
    expect((await serve({ url: 'app://elsewhere/index.html' })).status).toBe(404);
    expect(await (await serve({ url: 'app://workbench/../../../etc/passwd' })).text()).not.toContain('root:');
    const traversal = await serve({ url: 'app://workbench/%2e%2e/%2e%2e/%2e%2e/etc/passwd' });
    expect(await traversal.text()).not.toContain('root:');
    expect((await serve({ url: 'app://workbench/missing.js' })).status).toBe(404);
  });

  it('keeps the page on the app origin: navigation, window.open and webviews are refused; web links go to the browser', async () => {
    const contents = new StandInWebContents();
    const shell = new StandInShell();
    const refused: string[] = [];
    confineWebContents(contents, shell, APP_ORIGIN, (url, why) => refused.push(`${why} ${url}`));
    expect(contents.navigate(`${APP_ORIGIN}/index.html#/library`)).toBe(true);
    expect(contents.navigate('https://evil.example/')).toBe(false);
    expect(contents.navigate('app://workbench.evil/')).toBe(false);
    expect(contents.navigate('file:///etc/passwd')).toBe(false);
    expect(contents.windowOpen('https://arxiv.org/abs/2608.19197')).toBe('deny');
    expect(contents.windowOpen('file:///etc/passwd')).toBe('deny');
    expect(contents.windowOpen('javascript:alert(1)')).toBe('deny');
    expect(contents.attachWebview()).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(shell.opened).toEqual(['https://arxiv.org/abs/2608.19197']);
    expect(refused.filter((r) => r.startsWith('not a web link'))).toHaveLength(2);
    expect(refused.filter((r) => r.startsWith('navigation outside'))).toHaveLength(3);
  });

  it('opens only plain web links externally', async () => {
    const shell = new StandInShell();
    await openExternalLink(shell, 'https://example.org/a?b=c');
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'spade://x', 'https://user:pw@example.com/', 'smb://host/share']) {
      await expect(openExternalLink(shell, bad), bad).rejects.toThrow();
    }
    expect(shell.opened).toEqual(['https://example.org/a?b=c']);
  });

  it('remembers the window and reopens it where a display still shows it', () => {
    const dir = tmp();
    const win = new StandInWindow();
    win.bounds = { x: 2200, y: 120, width: 1000, height: 700 };
    win.maximized = true;
    rememberWindowState(win, (s) => saveWindowState(dir, s));
    win.close();
    const state = loadWindowState(dir);
    expect(state).toEqual({ x: 2200, y: 120, width: 1000, height: 700, maximized: true });
    const twoScreens = [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }, { workArea: { x: 1920, y: 0, width: 1920, height: 1080 } }];
    expect(windowPlacement(state, twoScreens)).toEqual({ x: 2200, y: 120, width: 1000, height: 700 });
    // The second screen was unplugged: open on the first, at the default place.
    expect(windowPlacement(state, twoScreens.slice(0, 1))).toEqual({ width: 1000, height: 700 });
    expect(loadWindowState(tmp())).toMatchObject({ width: 1400, height: 900, maximized: false });
  });

  it('seals job secrets with the keychain, and keeps them in memory when there is no real one', () => {
    const storage = new StandInSafeStorage();
    const sealer = keychainSealer(storage, 'linux')!;
    expect(sealer).toBeDefined();
    let saved: Record<string, string> = {};
    const store = new KeychainSecretStore(sealer, { load: () => saved, save: (s) => (saved = s) });
    store.set('HF_TOKEN', 'hf_secret_value');
    expect(JSON.stringify(saved)).not.toContain('hf_secret_value');
    const again = new KeychainSecretStore(sealer, { load: () => saved, save: () => {} });
    expect(again.values()).toEqual(['hf_secret_value']);
    expect(keychainSealer(new StandInSafeStorage(false), 'linux')).toBeUndefined();
    expect(keychainSealer(new StandInSafeStorage(true, 'basic_text'), 'linux')).toBeUndefined();
    expect(keychainSealer(new StandInSafeStorage(true, 'basic_text'), 'darwin')).toBeDefined();
  });
});
