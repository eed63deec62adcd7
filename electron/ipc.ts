// Every IPC channel between the tray app's main process and its renderer, with the payload of
// each, in one file. The preload exposes exactly `RendererApi` (built from these channels) and
// nothing else; main registers a handler per channel. The API key travels one way only: the
// renderer sends it to main, main stores it in the OS keychain and never sends it back.

/** Channel names (ipcMain.handle / ipcRenderer.invoke). */
export const IPC = {
  /** Whether a key is stored and whether the keychain works; never the key. */
  settingsStatus: 'settings:status',
  /** Checks a key (or the stored one) with a real `GET /jobs?pageSize=1` on the service. */
  settingsTest: 'settings:test-connection',
  /** Checks then stores a key in the OS keychain. */
  settingsSave: 'settings:save-key',
  /** Removes the stored key. */
  settingsClear: 'settings:clear-key',
} as const;
export type IpcChannel = (typeof IPC)[keyof typeof IPC];

/** Why a keychain or connection step did not succeed. */
export type SettingsProblem =
  | 'KEYCHAIN_UNAVAILABLE'
  | 'EMPTY_KEY'
  | 'NO_KEY'
  | 'UNAUTHORIZED'
  | 'SERVICE_UNREACHABLE'
  | 'SERVICE_ERROR';

export type KeyStatus =
  | { keychain: 'available'; keyStored: boolean; serviceUrl: string }
  | { keychain: 'unavailable'; keyStored: false; serviceUrl: string; message: string };

export type SettingsResult = { ok: true; message: string } | { ok: false; problem: SettingsProblem; message: string };

/** Request of settings:test-connection: a key typed in the window, or none to test the stored one. */
export interface TestConnectionRequest {
  key?: string;
}

export interface SaveKeyRequest {
  key: string;
}

/** Payload types of each channel: what invoke sends and what the handler answers. */
export interface IpcContract {
  [IPC.settingsStatus]: { request: void; response: KeyStatus };
  [IPC.settingsTest]: { request: TestConnectionRequest; response: SettingsResult };
  [IPC.settingsSave]: { request: SaveKeyRequest; response: SettingsResult };
  [IPC.settingsClear]: { request: void; response: SettingsResult };
}

/** The one API the preload exposes to the settings window (window.renderbridge). */
export interface RendererApi {
  status(): Promise<KeyStatus>;
  testConnection(request: TestConnectionRequest): Promise<SettingsResult>;
  saveKey(request: SaveKeyRequest): Promise<SettingsResult>;
  clearKey(): Promise<SettingsResult>;
}

/** Name of the global the preload defines in the renderer. */
export const RENDERER_API_NAME = 'renderbridge';
