// The API key half of the settings window, without Electron (farm-settings.ts adds the URL, the
// profile and config.toml): store, test and clear the key of one profile in the OS keychain through
// the daemon's Keychain port (the entry the daemon reads for that profile,
// user-config/keychain-entry.ts). "Test connection" is a real `GET /jobs?pageSize=1` with the
// shared client. When no keychain can be reached the key is refused: there is no plain-file
// fallback. Answers never contain the key, and nothing here logs.
import type { Keychain } from '../../daemon/ports.js';
import { KeychainUnavailableError } from '../../daemon/keychain/errors.js';
import { ApiError, NetworkError } from '../../shared/client/errors.js';
import { RenderJobClient } from '../../shared/client/client.js';
import { type RenderJobClientOptions } from '../../shared/client/options.js';
import type { KeyStatus, SettingsResult } from '../ipc.js';

export interface KeychainSettingsOptions {
  /** The OS keychain entry of one profile (FarmSettings passes the entry of the profile in the window). */
  keychain: Keychain;
  /** Service API root, ending with /api/external/v1 (the daemon's `serviceUrl`). */
  serviceUrl: string;
  /** Options of the test client. Default: no retries, 10000 ms per request, user agent `renderbridge-tray`. */
  clientOptions?: Omit<RenderJobClientOptions, 'baseUrl' | 'apiKey'>;
}

const NO_KEYCHAIN =
  'No OS keychain is available, so the API key was not saved. Renderbridge keeps the key only in the OS ' +
  'keychain, never in a file: unlock or install one (Linux: a Secret Service such as gnome-keyring) and try ' +
  'again.';

export class KeychainSettings {
  constructor(private readonly options: KeychainSettingsOptions) {}

  /** Whether the keychain works and holds a key (never the key itself). */
  async status(): Promise<KeyStatus> {
    const serviceUrl = this.options.serviceUrl;
    try {
      const key = await this.options.keychain.get();
      return { keychain: 'available', keyStored: Boolean(key?.trim()), serviceUrl };
    } catch (err) {
      return { keychain: 'unavailable', keyStored: false, serviceUrl, message: `${NO_KEYCHAIN} (${describe(err)})` };
    }
  }

  /** Checks `key`, or the stored key when none is given, with a real `GET /jobs?pageSize=1`. */
  async testConnection(key?: string): Promise<SettingsResult> {
    let candidate = key?.trim();
    if (key !== undefined && !candidate)
      return { ok: false, problem: 'EMPTY_KEY', message: 'Enter the API key first.' };
    if (candidate === undefined) {
      try {
        candidate = (await this.options.keychain.get())?.trim() || undefined;
      } catch (err) {
        return { ok: false, problem: 'KEYCHAIN_UNAVAILABLE', message: `${NO_KEYCHAIN} (${describe(err)})` };
      }
      if (!candidate)
        return { ok: false, problem: 'NO_KEY', message: 'No API key is stored yet: enter one and save it.' };
    }
    return this.check(candidate);
  }

  /** Checks `key` against the service, then stores it in the keychain; a refused key is not stored. */
  async saveKey(key: string): Promise<SettingsResult> {
    const trimmed = key.trim();
    if (!trimmed) return { ok: false, problem: 'EMPTY_KEY', message: 'Enter the API key first.' };
    // Refuse early when there is nowhere safe to put it, before sending it anywhere.
    const status = await this.status();
    if (status.keychain === 'unavailable')
      return { ok: false, problem: 'KEYCHAIN_UNAVAILABLE', message: status.message };
    const checked = await this.check(trimmed);
    if (!checked.ok) return { ...checked, message: `${checked.message} The key was not saved.` };
    try {
      await this.options.keychain.set(trimmed);
    } catch (err) {
      return { ok: false, problem: 'KEYCHAIN_UNAVAILABLE', message: `${NO_KEYCHAIN} (${describe(err)})` };
    }
    return {
      ok: true,
      message: `${checked.message} The key is saved in the OS keychain; the daemon uses it within a few seconds.`,
    };
  }

  /** Removes the stored key. */
  async clearKey(): Promise<SettingsResult> {
    try {
      const removed = await this.options.keychain.delete();
      return {
        ok: true,
        message: removed ? 'The API key was removed from the OS keychain.' : 'No API key was stored.',
      };
    } catch (err) {
      return { ok: false, problem: 'KEYCHAIN_UNAVAILABLE', message: `${NO_KEYCHAIN} (${describe(err)})` };
    }
  }

  private async check(apiKey: string): Promise<SettingsResult> {
    const client = new RenderJobClient({
      maxRetries: 0,
      requestTimeoutMs: 10_000,
      userAgent: 'renderbridge-tray',
      ...this.options.clientOptions,
      baseUrl: this.options.serviceUrl,
      apiKey,
    });
    try {
      await client.listJobs({ pageSize: 1 });
      return { ok: true, message: `Connected to ${this.options.serviceUrl}: the service accepts this key.` };
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        return {
          ok: false,
          problem: 'UNAUTHORIZED',
          message:
            `The service refused this key (401 ${err.errorName}): check that it is a valid, unrevoked key of ` +
            `your workspace.`,
        };
      }
      if (err instanceof NetworkError) {
        return {
          ok: false,
          problem: 'SERVICE_UNREACHABLE',
          message:
            `The service at ${this.options.serviceUrl} did not answer ` +
            `(${err.timedOut ? 'timed out' : 'connection failed'}): check the service URL and the network.`,
        };
      }
      if (err instanceof ApiError) {
        return {
          ok: false,
          problem: 'SERVICE_ERROR',
          message: `The service answered ${err.status} ${err.errorName}: ${err.body.message}`,
        };
      }
      return {
        ok: false,
        problem: 'SERVICE_ERROR',
        message: `The service's answer could not be used: ${describe(err)}`,
      };
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof KeychainUnavailableError) return err.message.replace(/^keychain unavailable: /, '');
  return err instanceof Error ? err.message : String(err);
}
