// The Settings window's logic, without Electron: which farm (service URL), which profile of
// config.toml and which downloads folder, and the profile's API key. "Test connection" and Save
// check the URL and the key together (a real `GET /jobs?pageSize=1` through KeychainSettings)
// before anything is written; Save then stores the key in the profile's own keychain entry and
// the settings in config.toml (atomic write through user-config), making the profile the default
// one, so the running daemon follows the edit without a restart. Answers never contain the key.
import type { Keychain } from '../../daemon/ports.js';
import { normalizeServiceUrl } from '../../shared/service-url.js';
import { ConfigError } from '../../user-config/errors.js';
import { loadConfigFile, writeConfigFile, type LoadedConfig } from '../../user-config/file.js';
import { resolveConfig, resolveProfile } from '../../user-config/resolve.js';
import { ProfileName } from '../../user-config/schema.js';
import { PROFILE_ENV, SETTINGS } from '../../user-config/settings.js';
import type {
  ClearKeyRequest,
  FarmStatus,
  ProfileSummary,
  SaveKeyRequest,
  SettingsResult,
  TestConnectionRequest,
} from '../ipc.js';
import { KeychainSettings, type KeychainSettingsOptions } from './keychain-settings.js';

export interface FarmSettingsOptions {
  /** config.toml (user-config/locate.ts). */
  configFile: string;
  /** Home folder, for `~/` in folders and the defaults. */
  home: string;
  /** The tray's environment: its variables win over config.toml, as everywhere. */
  env: NodeJS.ProcessEnv;
  /** The keychain entry of a profile (user-config/keychain-entry.ts). */
  keychainFor: (profile: string) => Keychain;
  clientOptions?: KeychainSettingsOptions['clientOptions'];
}

/** What the window typed, checked: the URL as typed (kept in the file) and the API root it means. */
interface Checked {
  typedUrl: string;
  apiRoot: string;
  profile: string;
  downloadsDir?: string;
}

type Parsed = { ok: true; value: Checked } | { ok: false; result: SettingsResult };

const NOT_SAVED = 'The settings and the key were not saved.';

function bad(message: string): SettingsResult {
  return { ok: false, problem: 'BAD_SETTING', message };
}

export class FarmSettings {
  constructor(private readonly options: FarmSettingsOptions) {}

  async status(): Promise<FarmStatus> {
    const { configFile, env, home } = this.options;
    let file: LoadedConfig = { path: configFile, exists: false, data: {} };
    let configProblem: string | undefined;
    try {
      file = loadConfigFile(configFile);
    } catch (err) {
      configProblem = `${(err as Error).message}. Fix or remove the file; until then the window saves nothing.`;
    }
    let profile = resolveProfile({ config: file, env }).value;
    let serviceUrl = SETTINGS.serviceUrl.default(home);
    try {
      const resolved = resolveConfig({ config: file, env, home, allowMissingProfile: true });
      profile = resolved.profile.value;
      serviceUrl = resolved.settings.serviceUrl.value;
    } catch (err) {
      configProblem ??= (err as Error).message;
    }
    const names = [...new Set([profile, ...Object.keys(file.data.profiles ?? {})])];
    const profiles: ProfileSummary[] = [];
    for (const name of names) {
      const written = file.data.profiles?.[name];
      const keyStored = await this.options
        .keychainFor(name)
        .get()
        .then(
          (k) => Boolean(k?.trim()),
          () => false,
        );
      profiles.push({
        name,
        serviceUrl: written?.serviceUrl ?? SETTINGS.serviceUrl.default(home),
        downloadsDir: written?.downloadsDir ?? SETTINGS.downloadsDir.default(home),
        keyStored,
      });
    }
    const keys = await this.keychainSettings(profile, serviceUrl).status();
    return { ...keys, profile, profiles, configFile, ...(configProblem ? { configProblem } : {}) };
  }

  /** Checks the typed URL with the typed key, or with the profile's stored key when none is typed. */
  async testConnection(request: TestConnectionRequest): Promise<SettingsResult> {
    const parsed = this.parse(request, false);
    if (!parsed.ok) return parsed.result;
    const { apiRoot, profile } = parsed.value;
    return this.keychainSettings(profile, apiRoot).testConnection(typedKey(request.key));
  }

  /** Checks URL and key together; only then stores the key (when one was typed) and writes config.toml. */
  async saveKey(request: SaveKeyRequest): Promise<SettingsResult> {
    const parsed = this.parse(request, true);
    if (!parsed.ok) return parsed.result;
    const { typedUrl, apiRoot, profile, downloadsDir } = parsed.value;
    let file: LoadedConfig;
    try {
      file = loadConfigFile(this.options.configFile);
    } catch (err) {
      return {
        ok: false,
        problem: 'CONFIG_INVALID',
        message: `${(err as Error).message}. Fix or remove the file, then save again. ${NOT_SAVED}`,
      };
    }
    const keys = this.keychainSettings(profile, apiRoot);
    // Refuse before sending the key anywhere when there is nowhere safe to keep it.
    const keychain = await keys.status();
    if (keychain.keychain === 'unavailable')
      return { ok: false, problem: 'KEYCHAIN_UNAVAILABLE', message: keychain.message };
    const key = typedKey(request.key);
    const checked = await keys.testConnection(key);
    if (!checked.ok) {
      const hint =
        checked.problem === 'NO_KEY'
          ? `No API key is stored for profile "${profile}" yet: enter one.`
          : checked.message;
      return { ...checked, message: `${hint} ${NOT_SAVED}` };
    }
    if (key !== undefined) {
      try {
        await this.options.keychainFor(profile).set(key.trim());
      } catch (err) {
        return {
          ok: false,
          problem: 'KEYCHAIN_UNAVAILABLE',
          message:
            `The OS keychain did not store the key (${(err as Error).message}): unlock it and try ` +
            `again. ${NOT_SAVED}`,
        };
      }
    }
    const data = structuredClone(file.data);
    const profiles = (data.profiles ??= {});
    profiles[profile] = { ...profiles[profile], serviceUrl: typedUrl, downloadsDir: downloadsDir! };
    data.defaultProfile = profile;
    try {
      writeConfigFile(this.options.configFile, data);
    } catch (err) {
      const why =
        err instanceof ConfigError
          ? err.message
          : `${this.options.configFile} cannot be written (${(err as Error).message})`;
      return {
        ok: false,
        problem: 'CONFIG_INVALID',
        message:
          `${why}: check that the folder is ` +
          `writable. ${key !== undefined ? 'The key is in the OS keychain; ' : ''}the settings were not saved.`,
      };
    }
    const keyLine = key !== undefined ? 'The key is saved in the OS keychain' : 'The stored key is kept';
    return {
      ok: true,
      message:
        `${checked.message} ${keyLine} and profile "${profile}" in ${this.options.configFile}; the running ` +
        `daemon follows config.toml within a few seconds.${this.overridden()}`,
    };
  }

  async clearKey(request: ClearKeyRequest): Promise<SettingsResult> {
    const profile = ProfileName.safeParse(request.profile.trim());
    if (!profile.success)
      return bad(`Profile: "${request.profile}" is not a profile name (letters, digits, "-" and "_").`);
    return this.keychainSettings(profile.data, '').clearKey();
  }

  private keychainSettings(profile: string, serviceUrl: string): KeychainSettings {
    return new KeychainSettings({
      keychain: this.options.keychainFor(profile),
      serviceUrl,
      ...(this.options.clientOptions ? { clientOptions: this.options.clientOptions } : {}),
    });
  }

  private parse(request: TestConnectionRequest & { downloadsDir?: string }, withFolder: boolean): Parsed {
    const typedUrl = request.serviceUrl.trim();
    let apiRoot: string;
    try {
      apiRoot = normalizeServiceUrl(typedUrl);
    } catch (err) {
      return {
        ok: false,
        result: bad(`Service URL: ${(err as Error).message}. Type the farm's address, e.g. http://farm:8420.`),
      };
    }
    const profile = ProfileName.safeParse(request.profile.trim());
    if (!profile.success)
      return {
        ok: false,
        result: bad(
          `Profile: "${request.profile}" is not a profile name: use letters, digits, "-" and "_", starting ` +
            `with a letter or digit.`,
        ),
      };
    if (!withFolder) return { ok: true, value: { typedUrl, apiRoot, profile: profile.data } };
    const folder = (request.downloadsDir ?? '').trim();
    try {
      SETTINGS.downloadsDir.parse(folder, this.options.home);
    } catch {
      return {
        ok: false,
        result: bad('Downloads folder: enter the folder renders are downloaded to, e.g. ~/renderbridge-outputs.'),
      };
    }
    return { ok: true, value: { typedUrl, apiRoot, profile: profile.data, downloadsDir: folder } };
  }

  /** A note when a variable of the tray's environment wins over what was just saved. */
  private overridden(): string {
    const vars = [PROFILE_ENV, SETTINGS.serviceUrl.env!].filter((v) => this.options.env[v]);
    return vars.length ? ` Note: ${vars.join(' and ')} set in the environment win over config.toml.` : '';
  }
}

/** A typed key, or undefined when the field was left empty (then the stored key is used). */
function typedKey(key: string | undefined): string | undefined {
  return key?.trim() ? key : undefined;
}
