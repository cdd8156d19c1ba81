/**
 * The Electron main process: tray, windows and the IPC behind the preload API. Thin on purpose:
 * the core does the work (tokens, signing, the local server), the shell only asks the user.
 */
import path from 'node:path';
import {
  app,
  BrowserWindow,
  type IpcMainInvokeEvent,
  ipcMain,
  Menu,
  nativeImage,
  session,
  Tray,
} from 'electron';
import { version } from '../../package.json';
import { type StartedAgent, startAgent } from '../core';
import type { Language, PromptAnswer, WindowRequest } from '../shell/api';
import { SHELL_CHANNELS } from '../shell/api';
import { t } from '../shell/i18n';
import { windowPrompts } from '../shell/promptWindows';
import { SettingsService } from '../shell/settingsService';

const TRAY_ICON =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAQUlEQVR42mNgoBaQz3/9nxRMkWYMQ+hmAAiQbQC6ZpIMwKaZaANwaSbKAHyaCRpASDNWA4gFA5cOaGcAxZmJEgAAywnyUPJNetMAAAAASUVORK5CYII=';
const WINDOW_PAGE = path.join(__dirname, '../renderer/window.html');

/** A window and, for prompts, how its answer settles. */
interface OpenWindow {
  request: WindowRequest;
  settle?(answer: PromptAnswer): void;
}
const windows = new Map<number, OpenWindow>();
let settingsWindow: BrowserWindow | null = null;
let tray: Tray | null = null;

function openWindow(request: WindowRequest, size: { width: number; height: number }) {
  const window = new BrowserWindow({
    ...size,
    show: false,
    resizable: request.kind === 'settings',
    minimizable: request.kind === 'settings',
    alwaysOnTop: request.kind !== 'settings',
    title: 'ESign Agent',
    webPreferences: {
      preload: path.join(__dirname, 'preload.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  window.removeMenu();
  window.once('ready-to-show', () => {
    window.show();
    window.focus();
  });
  return window;
}

/** A prompt in its own window; closing it is a no. */
function prompt(request: Exclude<WindowRequest, { kind: 'settings' }>): Promise<PromptAnswer> {
  return new Promise((resolve) => {
    const window = openWindow(request, {
      width: 520,
      height: request.kind === 'confirmSign' ? 480 : 360,
    });
    const id = window.webContents.id;
    windows.set(id, {
      request,
      settle: (answer) => {
        windows.delete(id);
        resolve(answer);
        if (!window.isDestroyed()) window.close();
      },
    });
    window.on('closed', () => windows.get(id)?.settle?.(null));
    void window.loadFile(WINDOW_PAGE);
  });
}

/** Only our own pages may call the API. */
function fromOurWindow(event: IpcMainInvokeEvent): OpenWindow {
  const entry = windows.get(event.sender.id);
  if (!entry || !event.senderFrame?.url.startsWith('file://')) {
    throw new Error('not an agent window');
  }
  return entry;
}

function lockDown(): void {
  // No remote content: a request for anything but our own files is cancelled.
  session.defaultSession.webRequest.onBeforeRequest((details, callback) => {
    callback({
      cancel: !details.url.startsWith('file://') && !details.url.startsWith('devtools://'),
    });
  });
  session.defaultSession.setPermissionRequestHandler((_, __, callback) => callback(false));
  app.on('web-contents-created', (_, contents) => {
    contents.on('will-navigate', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });
}

async function start(): Promise<void> {
  const log = (message: string) => console.log(message);
  let started: StartedAgent;
  try {
    started = await startAgent({
      persist: 'settings',
      prompts: (settings) => windowPrompts(prompt, () => settings.language),
      // electron-builder.yml's extraResources puts them there; unpackaged, they are in agent/.
      ...(app.isPackaged
        ? { bundledIntermediates: path.join(process.resourcesPath, 'intermediates') }
        : {}),
      version,
      log,
    });
  } catch (error) {
    log(`the agent could not start: ${String(error)}`);
    app.exit(1);
    return;
  }
  const { core, settings, host, save } = started;
  const language = (): Language => settings.language;

  const applyLoginItem = (enabled: boolean) => {
    if (app.isPackaged) app.setLoginItemSettings({ openAtLogin: enabled, openAsHidden: true });
  };
  applyLoginItem(settings.startAtLogin);
  const service = new SettingsService({
    settings,
    save,
    core,
    host,
    version,
    onLanguage: () => drawTray(),
    onStartAtLogin: (enabled) => {
      applyLoginItem(enabled);
      drawTray();
    },
  });

  ipcMain.handle(SHELL_CHANNELS.request, (event) => fromOurWindow(event).request);
  ipcMain.handle(SHELL_CHANNELS.answer, (event, answer: unknown) => {
    const entry = fromOurWindow(event);
    const valid =
      entry.request.kind === 'askPin'
        ? typeof answer === 'string' || answer === null
        : typeof answer === 'boolean';
    entry.settle?.(valid ? (answer as PromptAnswer) : null);
  });
  const settingsOnly = (event: IpcMainInvokeEvent) => {
    if (fromOurWindow(event).request.kind !== 'settings') throw new Error('not the settings page');
  };
  ipcMain.handle(SHELL_CHANNELS.settings, (event) => {
    settingsOnly(event);
    return service.view();
  });
  ipcMain.handle(SHELL_CHANNELS.changeSettings, (event, change: unknown) => {
    settingsOnly(event);
    return service.change(change);
  });
  ipcMain.handle(SHELL_CHANNELS.testModule, (event, modulePath: unknown) => {
    settingsOnly(event);
    return service.testModule(modulePath);
  });

  const openSettings = () => {
    if (settingsWindow && !settingsWindow.isDestroyed()) {
      settingsWindow.show();
      settingsWindow.focus();
      return;
    }
    const request: WindowRequest = { kind: 'settings', language: language() };
    const window = openWindow(request, { width: 820, height: 640 });
    const id = window.webContents.id;
    windows.set(id, { request });
    window.on('closed', () => {
      windows.delete(id);
      settingsWindow = null;
    });
    settingsWindow = window;
    void window.loadFile(WINDOW_PAGE);
  };

  function drawTray(): void {
    const lang = language();
    tray ??= new Tray(nativeImage.createFromDataURL(TRAY_ICON));
    tray.setToolTip(t(lang, 'tray.tooltip'));
    tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: `ESign Agent ${version} — 127.0.0.1:${core.port}`, enabled: false },
        { type: 'separator' },
        { label: t(lang, 'tray.settings'), click: openSettings },
        {
          label: t(lang, 'tray.startAtLogin'),
          type: 'checkbox',
          checked: settings.startAtLogin,
          click: (item) => void service.change({ type: 'startAtLogin', enabled: item.checked }),
        },
        {
          label: t(lang, 'tray.language'),
          submenu: (['vi', 'en'] as const).map((entry) => ({
            label: t(lang, `language.${entry}`),
            type: 'radio' as const,
            checked: lang === entry,
            click: () => void service.change({ type: 'language', language: entry }),
          })),
        },
        { type: 'separator' },
        { label: t(lang, 'tray.quit'), click: () => app.quit() },
      ]),
    );
  }
  drawTray();
  app.on('second-instance', openSettings);
  app.on('before-quit', () => void core.close());
}

// One agent per user: a second start opens the first one's settings instead.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  lockDown();
  // Closing every window leaves the agent running in the tray.
  app.on('window-all-closed', () => {});
  void app.whenReady().then(start);
}
