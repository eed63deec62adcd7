// The app's windows and the rules every web contents follows: sandboxed renderer, context
// isolation, no Node, no navigation away, no pop-ups, no <webview>, a strict CSP. The settings
// window is a local page with the one preload bridge; the job window is the daemon's /ui/ page
// (its token in the URL fragment) and gets no preload at all.
import { BrowserWindow, session } from 'electron';
import { APP_CSP_HEADER, lockDown, secureWebPreferences } from './hardening.js';

/** Adds APP_CSP_HEADER to responses that carry no CSP of their own (the daemon's page sends a stricter one). */
export function installSessionCsp(): void {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    const headers = details.responseHeaders ?? {};
    const has = Object.keys(headers).some((k) => k.toLowerCase() === 'content-security-policy');
    callback({ responseHeaders: has ? headers : { ...headers, 'Content-Security-Policy': [APP_CSP_HEADER] } });
  });
  // No permission (camera, notifications from pages, geolocation...) is ever granted to a page.
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
}

export interface SettingsWindowOptions {
  /** The compiled preload script. */
  preload: string;
  /** settings.html. */
  page: string;
}

export function openSettingsWindow(options: SettingsWindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 560,
    height: 600,
    title: 'Renderbridge settings',
    show: false,
    webPreferences: secureWebPreferences(options.preload),
  });
  lockDown(win.webContents);
  win.once('ready-to-show', () => win.show());
  void win.loadFile(options.page);
  return win;
}

/** The daemon's job page; the token travels in the fragment, which is never sent over HTTP. */
export function openJobWindow(origin: string, token: string): BrowserWindow {
  const win = new BrowserWindow({
    width: 1100,
    height: 640,
    title: 'Renderbridge jobs',
    show: false,
    webPreferences: secureWebPreferences(),
  });
  lockDown(win.webContents);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(`${origin}/ui/#token=${encodeURIComponent(token)}`);
  return win;
}
