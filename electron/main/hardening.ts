// The security settings every window and web contents gets, in one place (type-only imports from
// electron, so test/electron/security.test.ts exercises them without the Electron binary).
import type { WebContents, WebPreferences } from 'electron';

/** CSP of the app's own pages, as their <meta> tag carries it: nothing but their own files. */
export const APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; base-uri " +
  "'none'; form-action 'none'";
/** The same as a response header, plus what only a header can say (frame-ancestors is ignored in <meta>). */
export const APP_CSP_HEADER = `${APP_CSP}; frame-ancestors 'none'`;

/** The webPreferences of every window: the secure defaults, stated explicitly. */
export function secureWebPreferences(preload?: string): WebPreferences {
  return {
    sandbox: true,
    contextIsolation: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
    ...(preload ? { preload } : {}),
  };
}

/** Denies pop-ups, navigation away from the loaded page, and <webview>. */
export function lockDown(contents: WebContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event, url) => {
    if (url !== contents.getURL()) event.preventDefault();
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
}
