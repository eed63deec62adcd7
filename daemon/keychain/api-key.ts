// Where the daemon's API key comes from: the OS keychain entry the tray app writes
// (KEYCHAIN_SERVICE / KEYCHAIN_ACCOUNT), else RENDERBRIDGE_API_KEY. The client is cached per key;
// the keychain is read again once `keyRefreshMs` has passed (the tray may have stored a new key),
// and at every call while no key is found. The key is never logged: only where it came from.
import { RenderJobClient } from '../../shared/client/client.js';
import { type RenderJobClientOptions } from '../../shared/client/options.js';
import { DaemonError } from '../errors.js';
import { KeychainUnavailableError } from './errors.js';
import type { ClientProvider, Keychain } from '../ports.js';

export type ApiKeySource = 'keychain' | 'env';

export interface ApiKeyLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ApiKeyProviderOptions {
  /**
   * Service API root (config.serviceUrl), or a function read at every call (the daemon follows edits of config.toml).
   */
  serviceUrl: string | (() => string);
  /** The keychain adapter; null reads the environment only. */
  keychain: Keychain | null;
  /** Where RENDERBRIDGE_API_KEY is read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How long a key read from the keychain is trusted before it is read again. Default 5000 ms. */
  keyRefreshMs?: number;
  /**
   * Options of the clients made (timeouts, retries, fetch). Default: the client's defaults,
   * user agent `renderbridge-daemon`.
   */
  clientOptions?: Omit<RenderJobClientOptions, 'baseUrl' | 'apiKey'>;
  /** Default: none. */
  logger?: ApiKeyLogger;
}

interface KeyRead {
  key: string;
  source: ApiKeySource;
}

export class ApiKeyProvider implements ClientProvider {
  private readonly env: NodeJS.ProcessEnv;
  private readonly keyRefreshMs: number;
  private cachedRead: { read: KeyRead | null; at: number } | undefined;
  private cachedClient: { key: string; serviceUrl: string; client: RenderJobClient } | undefined;
  private reading: Promise<KeyRead | null> | undefined;
  private lastKeychainProblem: string | undefined;

  constructor(private readonly options: ApiKeyProviderOptions) {
    this.env = options.env ?? process.env;
    this.keyRefreshMs = options.keyRefreshMs ?? 5000;
  }

  async client(): Promise<RenderJobClient> {
    const read = await this.current();
    if (!read) throw new DaemonError('NO_API_KEY');
    const serviceUrl =
      typeof this.options.serviceUrl === 'function' ? this.options.serviceUrl() : this.options.serviceUrl;
    if (this.cachedClient?.key !== read.key || this.cachedClient.serviceUrl !== serviceUrl) {
      this.cachedClient = {
        key: read.key,
        serviceUrl,
        client: new RenderJobClient({
          userAgent: 'renderbridge-daemon',
          // Said in the log, so a submission that took longer than usual shows why.
          onReconnect: (i) =>
            this.options.logger?.info(
              { method: i.method, path: i.path, downMs: i.downMs },
              'the connection to the service dropped and came back',
            ),
          ...this.options.clientOptions,
          baseUrl: serviceUrl,
          apiKey: read.key,
        }),
      };
      this.options.logger?.info(
        { apiKeySource: read.source },
        'using the API key from the ' + (read.source === 'env' ? 'environment' : 'keychain'),
      );
    }
    return this.cachedClient.client;
  }

  async apiKeySource(): Promise<ApiKeySource | null> {
    return (await this.current())?.source ?? null;
  }

  /** The last problem reading the keychain (e.g. "keychain unavailable: ..."), or undefined. */
  get keychainProblem(): string | undefined {
    return this.lastKeychainProblem;
  }

  /** Forget the cached key: the next call reads the keychain again (e.g. the service answered 401). */
  invalidate(): void {
    this.cachedRead = undefined;
  }

  private async current(): Promise<KeyRead | null> {
    const c = this.cachedRead;
    if (c && c.read && Date.now() - c.at < this.keyRefreshMs) return c.read;
    // One read at a time: concurrent callers share it.
    this.reading ??= this.readKey().finally(() => {
      this.reading = undefined;
    });
    const read = await this.reading;
    this.cachedRead = { read, at: Date.now() };
    return read;
  }

  private async readKey(): Promise<KeyRead | null> {
    const fromKeychain = await this.readKeychain();
    if (fromKeychain) return { key: fromKeychain, source: 'keychain' };
    const fromEnv = this.env.RENDERBRIDGE_API_KEY?.trim();
    return fromEnv ? { key: fromEnv, source: 'env' } : null;
  }

  private async readKeychain(): Promise<string | null> {
    if (!this.options.keychain) return null;
    try {
      const value = (await this.options.keychain.get())?.trim();
      this.lastKeychainProblem = undefined;
      return value || null;
    } catch (err) {
      const problem =
        err instanceof KeychainUnavailableError
          ? err.message
          : `keychain unavailable: ${err instanceof Error ? err.message : String(err)}`;
      // Said once per distinct problem, not at every poll.
      if (problem !== this.lastKeychainProblem)
        this.options.logger?.warn({ problem }, 'the OS keychain cannot be read; using RENDERBRIDGE_API_KEY if set');
      this.lastKeychainProblem = problem;
      return null;
    }
  }
}
