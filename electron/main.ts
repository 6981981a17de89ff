// The desktop shell: one window on the same engine the web host uses, bound over IPC. The engine
// runs in its own worker thread (core/host/engineProcess.ts, the boundary the web host uses too);
// this process holds only the window, the bridge and the hooks only it can serve. Wiring only:
// every decision (who may call, what the app:// scheme serves, where the page may go, which links
// leave, where the window opens, how secrets are sealed) is a function in desktop.ts, tested in Node.
import { app, BrowserWindow, dialog, ipcMain, Menu, protocol, safeStorage, screen, shell, type MenuItemConstructorOptions } from 'electron';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { launchEngine } from '../core/host/engineProcess';
import { APP_ORIGIN, APP_SCHEME, appProtocolHandler, confineWebContents, ipcCallHandler, keychainSealer, openExternalLink, rememberWindowState, windowPlacement } from './desktop';
import { loadWindowState, saveWindowState } from './windowState';

process.env.SPADE_APP_ROOT ??= app.getAppPath();

protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
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
  const sealer = keychainSealer(safeStorage);
  // Not awaited: the window opens while the worker loads; the page's first calls wait in its queue,
  // and if it cannot start they fail with the reason.
  const engine = launchEngine({
    dataDir: userData,
    shell: 'electron',
    importSeed: true,
    ...(existsSync(electronBinding) ? { nativeBinding: electronBinding } : {}),
    platform: {
      openExternal: (url) => openExternalLink(shell, url),
      pickPaths: async ({ title, folders, multiple }) => {
        // createDirectory: an export folder may not exist yet (macOS shows the button only when asked).
        const r = await dialog.showOpenDialog({ title, properties: [folders ? 'openDirectory' : 'openFile', ...(multiple ? (['multiSelections'] as const) : []), 'createDirectory'] });
        return r.canceled ? [] : r.filePaths;
      },
    },
    ...(sealer ? { secretSealer: sealer } : {}),
  });
  ipcMain.handle('spade:call', ipcCallHandler(engine.dispatch));
  const rendererRoot = join(root, 'dist', 'renderer');
  protocol.handle(APP_SCHEME, appProtocolHandler(rendererRoot));

  // Registered before the window exists, so its own contents are confined as well as any later ones.
  const refused = (url: string, why: string) =>
    engine.events.emit('log.line', { time: new Date().toISOString(), level: 'warn', source: 'shell', message: `refused ${why}${url ? `: ${url.slice(0, 200)}` : ''}` });
  app.on('web-contents-created', (_e, contents) => confineWebContents(contents, shell, APP_ORIGIN, refused));

  const state = loadWindowState(userData);
  const win = new BrowserWindow({
    ...windowPlacement(state, screen.getAllDisplays()),
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

  const forward = engine.events.subscribe((name, payload) => {
    if (!win.isDestroyed()) win.webContents.send('spade:event', name, payload);
  });
  rememberWindowState(win, (s) => saveWindowState(userData, s));
  win.on('closed', () => forward());

  app.on('second-instance', () => {
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', () => {
    void engine.close();
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
    { role: 'help', submenu: [{ label: 'SPADE paper (arXiv 2608.19197)', click: () => void openExternalLink(shell, 'https://arxiv.org/abs/2608.19197') }] },
  ];
}
