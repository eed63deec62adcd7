// Every IPC channel between the tray app's main process and its renderer, with the payload of
// each, in one file. The preload exposes exactly `RendererApi` (built from these channels) and
// nothing else; main registers a handler per channel. The API key travels one way only: the
// renderer sends it to main, main stores it in the OS keychain and never sends it back. The
// farm settings (service URL, profile, downloads folder) go to config.toml, after the URL and
// the key were checked together.

/** Channel names (ipcMain.handle / ipcRenderer.invoke). */
export const IPC = {
  /** The profiles of config.toml, the one in use, whether keys are stored and the keychain works; never a key. */
  settingsStatus: 'settings:status',
  /** Checks a service URL with a key (or the profile's stored one): a real `GET /jobs?pageSize=1`. */
  settingsTest: 'settings:test-connection',
  /**
   * Checks URL and key together, then stores the key in the profile's keychain entry and the settings in config.toml.
   */
  settingsSave: 'settings:save-key',
  /** Removes the stored key of a profile. */
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
  | 'SERVICE_ERROR'
  /** A field of the window is not valid (service URL, profile name, downloads folder). */
  | 'BAD_SETTING'
  /** config.toml cannot be read or written. */
  | 'CONFIG_INVALID';

export type KeyStatus =
  | { keychain: 'available'; keyStored: boolean; serviceUrl: string }
  | { keychain: 'unavailable'; keyStored: false; serviceUrl: string; message: string };

export type SettingsResult = { ok: true; message: string } | { ok: false; problem: SettingsProblem; message: string };

/** A profile of config.toml as the window shows it (what the file says, else the default). */
export interface ProfileSummary {
  name: string;
  /** As written in the profile (a bare origin is fine), else the default API root. */
  serviceUrl: string;
  downloadsDir: string;
  keyStored: boolean;
}

/**
 * Answer of settings:status: the keychain, the profile in use (`serviceUrl` is the API root it
 * resolves to) and every profile.
 */
export type FarmStatus = KeyStatus & {
  profile: string;
  profiles: ProfileSummary[];
  configFile: string;
  /** Why config.toml cannot be used (it is then not written), or absent. */
  configProblem?: string;
};

/**
 * Request of settings:test-connection: the URL and profile in the window, a typed key or none to
 * test the profile's stored one.
 */
export interface TestConnectionRequest {
  serviceUrl: string;
  profile: string;
  key?: string;
}

/** Request of settings:save-key: everything the window edits; no key keeps (and checks) the profile's stored one. */
export interface SaveKeyRequest extends TestConnectionRequest {
  downloadsDir: string;
}

export interface ClearKeyRequest {
  profile: string;
}

/** Payload types of each channel: what invoke sends and what the handler answers. */
export interface IpcContract {
  [IPC.settingsStatus]: { request: void; response: FarmStatus };
  [IPC.settingsTest]: { request: TestConnectionRequest; response: SettingsResult };
  [IPC.settingsSave]: { request: SaveKeyRequest; response: SettingsResult };
  [IPC.settingsClear]: { request: ClearKeyRequest; response: SettingsResult };
}

/** The one API the preload exposes to the settings window (window.renderbridge). */
export interface RendererApi {
  status(): Promise<FarmStatus>;
  testConnection(request: TestConnectionRequest): Promise<SettingsResult>;
  saveKey(request: SaveKeyRequest): Promise<SettingsResult>;
  clearKey(request: ClearKeyRequest): Promise<SettingsResult>;
}

/** Name of the global the preload defines in the renderer. */
export const RENDERER_API_NAME = 'renderbridge';
