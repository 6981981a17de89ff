// The desktop shell: one window on the same engine the web host uses, bound over IPC. Kept thin
// on purpose; everything testable lives in core/ and renderer/.
import { app, BrowserWindow, dialog, ipcMain, Menu, protocol, safeStorage, screen, shell, type MenuItemConstructorOptions } from 'electron';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../core/api';
import { contentSecurityPolicy } from '../core/host/csp';
import { readStatic } from '../core/host/staticFiles';
import { createHandlers } from '../core/handlers';
import { createDispatcher } from '../core/server/dispatcher';
import { Services } from '../core/services/services';
import { validateExternalUrl } from '../core/handlers/app';
import { loadWindowState, saveWindowState } from './windowState';

const APP_ORIGIN = 'app://workbench';
process.env.SPADE_APP_ROOT ??= app.getAppPath();

protocol.registerSchemesAsPrivileged([
  { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
]);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  void start();
}

async function start(): Promise<void> {
  await app.whenReady();
  const root = app.getAppPath();
  const userData = app.getPath('userData');
  const electronBinding = join(root, 'build', 'electron-native', 'better_sqlite3.node');
  const services = new Services({
    dataDir: userData,
    shell: 'electron',
    ...(existsSync(electronBinding) ? { nativeBinding: electronBinding } : {}),
    platform: {
      openExternal: (url) => shell.openExternal(validateExternalUrl(url).toString()),
      pickPaths: async ({ title, folders }) => {
        const r = await dialog.showOpenDialog({ title, properties: [folders ? 'openDirectory' : 'openFile', 'multiSelections'] });
        return r.canceled ? [] : r.filePaths;
      },
    },
    // Job secrets are sealed by the OS keychain; where none is usable they stay in memory only.
    ...(safeStorage.isEncryptionAvailable()
      ? { secretSealer: { encrypt: (p: string) => safeStorage.encryptString(p), decrypt: (b: Buffer) => safeStorage.decryptString(b) } }
      : {}),
  });
  const dispatch = createDispatcher(createHandlers(services), (m) => services.log('error', 'api', m));
  services.memory.importSeedPackIfEmpty();

  ipcMain.handle('spade:call', async (event, name: unknown, input: unknown) => {
    if (!event.senderFrame || new URL(event.senderFrame.url).origin !== APP_ORIGIN) {
      return { ok: false, error: new ApiError('unauthorized', 'Calls are only accepted from the workbench page').toJSON() };
    }
    try {
      return { ok: true, value: await dispatch(name, input, { transport: 'electron' }) };
    } catch (e) {
      return { ok: false, error: (e instanceof ApiError ? e : new ApiError('internal', String(e))).toJSON() };
    }
  });

  const rendererRoot = join(root, 'dist', 'renderer');
  protocol.handle('app', async (request) => {
    const url = new URL(request.url);
    if (url.host !== 'workbench') return new Response('Not found', { status: 404 });
    const file = await readStatic(rendererRoot, url.pathname);
    if (!file) return new Response('Not found', { status: 404 });
    return new Response(new Uint8Array(file.body), {
      headers: { 'Content-Type': file.contentType, 'Content-Security-Policy': contentSecurityPolicy },
    });
  });

  const state = loadWindowState(userData);
  const visible = screen.getAllDisplays().some((d) => {
    const b = d.workArea;
    return state.x !== undefined && state.y !== undefined && state.x >= b.x - 50 && state.y >= b.y - 50 && state.x < b.x + b.width && state.y < b.y + b.height;
  });
  const win = new BrowserWindow({
    width: state.width,
    height: state.height,
    ...(visible ? { x: state.x, y: state.y } : {}),
    title: 'SPADE Workbench',
    show: false,
    webPreferences: {
      preload: join(root, 'dist', 'electron', 'preload.cjs'),
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  if (state.maximized) win.maximize();
  win.once('ready-to-show', () => win.show());

  const forward = services.events.subscribe((name, payload) => {
    if (!win.isDestroyed()) win.webContents.send('spade:event', name, payload);
  });
  win.webContents.on('will-navigate', (e, url) => {
    if (!url.startsWith(`${APP_ORIGIN}/`)) e.preventDefault();
  });
  win.webContents.setWindowOpenHandler(({ url }) => {
    try {
      void shell.openExternal(validateExternalUrl(url).toString());
    } catch {
      // not a web link: refuse silently, as a browser would for a blocked popup
    }
    return { action: 'deny' };
  });
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-attach-webview', (ev) => ev.preventDefault());
  });
  const remember = () => {
    if (win.isDestroyed()) return;
    const b = win.getNormalBounds();
    saveWindowState(userData, { x: b.x, y: b.y, width: b.width, height: b.height, maximized: win.isMaximized() });
  };
  win.on('close', remember);
  win.on('closed', () => forward());

  app.on('second-instance', () => {
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', () => {
    void services.close();
  });

  Menu.setApplicationMenu(Menu.buildFromTemplate(menuTemplate(win)));
  if (!existsSync(join(rendererRoot, 'index.html'))) {
    await win.loadURL(`data:text/plain,${encodeURIComponent('The renderer is not built: run npm run build.')}`);
    return;
  }
  await win.loadURL(`${APP_ORIGIN}/index.html`);
}

function menuTemplate(win: BrowserWindow): MenuItemConstructorOptions[] {
  const send = (command: string) => () => win.webContents.send('spade:event', 'ui.command', { command });
  const mac = process.platform === 'darwin';
  return [
    ...(mac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Save', accelerator: 'CmdOrCtrl+S', click: send('editor.save') },
        { label: 'Quick Open…', accelerator: 'CmdOrCtrl+P', click: send('quickOpen') },
        { type: 'separator' },
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { label: 'Command Palette…', accelerator: 'CmdOrCtrl+Shift+P', click: send('palette.open') },
        { type: 'separator' },
        { role: 'reload' },
        { role: 'toggleDevTools' },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    { role: 'help', submenu: [{ label: 'SPADE paper (arXiv 2608.19197)', click: () => void shell.openExternal('https://arxiv.org/abs/2608.19197') }] },
  ];
}
