// The Keychain port through keytar (macOS Keychain, Windows Credential Vault, libsecret on Linux).
// keytar is a native module: it is imported on first use, so a machine where it is missing or
// fails to load still starts the daemon, which then reports "keychain unavailable".
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../../shared/constants.js';
import type { Keychain } from '../ports.js';
import { KeychainUnavailableError, type KeychainEntry } from './errors.js';

interface KeytarModule {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

export interface KeytarKeychainOptions extends KeychainEntry {
  /** Module specifier to import. Default `keytar`. */
  moduleName?: string;
}

export class KeytarKeychain implements Keychain {
  private readonly service: string;
  private readonly account: string;
  private readonly moduleName: string;
  private loading: Promise<KeytarModule> | undefined;

  constructor(options: KeytarKeychainOptions = {}) {
    this.service = options.service ?? KEYCHAIN_SERVICE;
    this.account = options.account ?? KEYCHAIN_ACCOUNT;
    this.moduleName = options.moduleName ?? 'keytar';
  }

  get(): Promise<string | null> {
    return this.call((k) => k.getPassword(this.service, this.account));
  }

  set(secret: string): Promise<void> {
    if (!secret) return Promise.reject(new TypeError('the secret must not be empty'));
    return this.call((k) => k.setPassword(this.service, this.account, secret));
  }

  delete(): Promise<boolean> {
    return this.call((k) => k.deletePassword(this.service, this.account));
  }

  private async call<T>(fn: (k: KeytarModule) => Promise<T>): Promise<T> {
    const keytar = await this.load();
    try {
      return await fn(keytar);
    } catch (err) {
      // keytar rejects with plain Errors ("Cannot autolaunch D-Bus without X11 $DISPLAY", a locked
      // keyring...); none of them mentions the secret.
      throw new KeychainUnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
    }
  }

  private load(): Promise<KeytarModule> {
    this.loading ??= (async () => {
      try {
        const mod = (await import(this.moduleName)) as { default?: KeytarModule } & Partial<KeytarModule>;
        const keytar = mod.default ?? (mod as KeytarModule);
        if (typeof keytar.getPassword !== 'function') throw new Error(`${this.moduleName} has no getPassword`);
        return keytar;
      } catch (err) {
        throw new KeychainUnavailableError(
          `${this.moduleName} could not be loaded (${err instanceof Error ? err.message : String(err)})`,
          { cause: err },
        );
      }
    })();
    return this.loading;
  }
}
