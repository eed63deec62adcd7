// The tray app's main process: thin wiring over the plain modules of electron/core (tested
// without Electron). Security: app.enableSandbox() before anything, one instance, every web
// contents locked down (windows.ts), a CSP on every page, one preload bridge for the settings
// window only. Everything is built inside startTrayApp from what main() passes in: no module-level
// state. The Electron binary cannot run on the project's CI; see docs/reference/development.md.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, dialog, shell, type BrowserWindow } from 'electron';
import { defaultDaemonConfig, loadDaemonConfig, type DaemonConfig } from '../../daemon/config.js';
import { KeytarKeychain } from '../../daemon/keychain/keytar.js';
import type { Keychain } from '../../daemon/ports.js';
import { DaemonClient } from '../../shared/daemon/client.js';
import { keychainEntryFor } from '../../user-config/keychain-entry.js';
import { locateUserFiles } from '../../user-config/locate.js';
import { addonInstructions, addonZipPath, daemonCommand, type AppLocation } from '../core/app-paths.js';
import { DaemonEvents } from '../core/daemon-events.js';
import { DaemonLog } from '../core/daemon-log.js';
import { FarmSettings } from '../core/farm-settings.js';
import { trayNotifier } from '../core/notifications.js';
import { DaemonSupervisor } from '../core/supervisor.js';
import {
  applyDaemonEvent,
  EMPTY_TRAY_STATE,
  trayIcon,
  trayMenu,
  trayStateFromJobs,
  type TrayAction,
  type TrayState,
} from '../core/tray-model.js';
import { transfersFromSubmissions } from '../core/transfers.js';
import { registerIpcHandlers } from './ipc-handlers.js';
import { showNotification } from './notifications.js';
import { createTray } from './tray.js';
import { lockDown } from './hardening.js';
import { installSessionCsp, openJobWindow, openSettingsWindow } from './windows.js';

export interface TrayAppDeps {
  config: DaemonConfig;
  location: AppLocation;
  /** The keychain entry of a profile (the default profile keeps the old single entry). */
  keychainFor: (profile: string) => Keychain;
  /** config.toml the Settings window edits, and the home folder its `~/` paths start from. */
  configFile: string;
  home: string;
  /** Where the daemon's log files go: the platform's log folder (user-config: ~/Library/Logs/renderbridge on macOS). */
  logsDir: string;
  /** The app's binary, started as Node for the daemon (process.execPath). */
  execPath: string;
  env: NodeJS.ProcessEnv;
}

export function startTrayApp(deps: TrayAppDeps): void {
  const built = path.join(deps.location.appPath, 'dist-electron');
  const settingsPage = path.join(built, 'renderer', 'settings.html');
  const settingsUrl = pathToFileURL(settingsPage).href;
  const icons = Object.fromEntries(
    (['idle', 'busy', 'error', 'stopped'] as const).map((i) => [
      i,
      path.join(deps.location.appPath, 'electron', 'build-resources', `tray-${i}.png`),
    ]),
  ) as Record<'idle' | 'busy' | 'error' | 'stopped', string>;

  installSessionCsp();
  app.on('web-contents-created', (_event, contents) => lockDown(contents));

  const settings = new FarmSettings({
    configFile: deps.configFile,
    home: deps.home,
    env: deps.env,
    keychainFor: deps.keychainFor,
  });
  registerIpcHandlers(settings, (url) => url === settingsUrl);

  // The running daemon's token is masked by value too, whatever its shape.
  const daemonLog = new DaemonLog({ dir: deps.logsDir, secrets: (): (string | null)[] => [supervisor.current.token] });
  const supervisor = new DaemonSupervisor({
    ...daemonCommand(deps.location, deps.execPath, deps.config.stateDir, deps.env),
    stateDir: deps.config.stateDir,
    output: daemonLog.output,
  });
  let state: TrayState = EMPTY_TRAY_STATE;
  let settingsWindow: BrowserWindow | null = null;
  let jobWindow: BrowserWindow | null = null;

  const showJobWindow = (): void => {
    const d = supervisor.current;
    if (d.state !== 'running' || !d.origin || !d.token) return;
    if (jobWindow && !jobWindow.isDestroyed()) return jobWindow.focus();
    jobWindow = openJobWindow(d.origin, d.token);
  };
  const showSettings = (): void => {
    if (settingsWindow && !settingsWindow.isDestroyed()) return settingsWindow.focus();
    settingsWindow = openSettingsWindow({ preload: path.join(built, 'preload', 'index.cjs'), page: settingsPage });
  };
  const onAction = (a: TrayAction): void => {
    switch (a.type) {
      case 'openFolder':
      case 'openLog':
        void shell.openPath(a.path);
        return;
      case 'openJobWindow':
        return showJobWindow();
      case 'openSettings':
        return showSettings();
      case 'showAddon': {
        const zip = addonZipPath(deps.location);
        const exists = existsSync(zip);
        if (exists) shell.showItemInFolder(zip);
        void dialog.showMessageBox({
          type: exists ? 'info' : 'warning',
          title: 'Install the Blender add-on',
          message: addonInstructions(zip, exists),
        });
        return;
      }
      case 'quit':
        app.quit();
    }
  };

  const tray = createTray(icons, onAction);
  const redraw = (): void =>
    tray.update(
      trayMenu(state, supervisor.current, { outputsDir: deps.config.downloadsDir, daemonLog: daemonLog.file }),
      trayIcon(state, supervisor.current),
    );

  const notify = trayNotifier();
  const events = new DaemonEvents({
    connection: () => {
      const d = supervisor.current;
      return d.state === 'running' && d.origin && d.token ? { origin: d.origin, token: d.token } : null;
    },
    onOpen: (conn) => {
      // The daemon does not replay missed events: re-read the lists at each (re)connection.
      const client = new DaemonClient(conn);
      void Promise.all([client.listJobs(), client.listSubmissions()])
        .then(([{ jobs }, { submissions }]) => {
          const fresh = trayStateFromJobs(jobs, state);
          state = { ...fresh, transfers: transfersFromSubmissions(submissions, fresh.transfers) };
          redraw();
        })
        .catch(() => undefined);
    },
    onEvent: (e) => {
      state = applyDaemonEvent(state, e);
      redraw();
      const model = notify(e);
      if (model) showNotification(model, showJobWindow);
    },
  });

  supervisor.onChange((s) => {
    daemonLog.noteStatus(s);
    redraw();
    if (s.state === 'running') events.reconnect();
  });
  supervisor.start();
  events.start();
  redraw();

  // First run: no key yet, so ask for one. A missing keychain is said in the window too.
  void settings.status().then((s) => {
    if (!s.keyStored) showSettings();
  });

  app.on('second-instance', () => showJobWindow());
  // Closing every window leaves the app in the tray.
  app.on('window-all-closed', () => undefined);
  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting) return;
    event.preventDefault();
    quitting = true;
    void Promise.allSettled([events.stop(), supervisor.stop()]).then(() => {
      daemonLog.close();
      tray.destroy();
      app.exit(0);
    });
  });
}

/**
 * The settings of the active profile of config.toml; a broken file is shown to the artist, then the
 * environment's settings are used.
 */
function trayConfig(): DaemonConfig {
  try {
    return loadDaemonConfig(process.env, {});
  } catch (err) {
    dialog.showErrorBox(
      'renderbridge: config.toml not used',
      `${(err as Error).message}\n\nFix the file; until then the tray uses the defaults and environment variables.`,
    );
    return defaultDaemonConfig(process.env);
  }
}

async function main(): Promise<void> {
  // Every renderer sandboxed, whatever a window asks for; must run before the app is ready.
  app.enableSandbox();
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  await app.whenReady();
  const config = trayConfig();
  const where = locateUserFiles(process.env);
  startTrayApp({
    config,
    location: { packaged: app.isPackaged, resourcesPath: process.resourcesPath, appPath: app.getAppPath() },
    keychainFor: (profile) => new KeytarKeychain(keychainEntryFor(profile)),
    configFile: where.configFile,
    home: where.home,
    logsDir: where.dirs.logs,
    execPath: process.execPath,
    env: process.env,
  });
}

void main();
