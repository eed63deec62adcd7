// What the client commands (submit, jobs) share: the service URL and the API key, read the way
// the daemon reads them (OS keychain entry of the tray app, else RENDERBRIDGE_API_KEY).
import type { Command } from 'commander';
import { ApiKeyProvider } from '../daemon/keychain/api-key.js';
import { defaultDaemonConfig, type DaemonConfig } from '../daemon/config.js';
import { KeytarKeychain } from '../daemon/keychain/keytar.js';
import { VERSION } from './version.js';

export interface ConnectionOptions {
  service?: string;
  json?: boolean;
}

/** Adds --service and --json to a client command. */
export function withConnectionOptions(cmd: Command): Command {
  return cmd
    .option('--service <url>', 'service API root, ending in /api/external/v1 (default: RENDERBRIDGE_SERVICE_URL or the bundled service on 127.0.0.1:8420)')
    .option('--json', 'print one JSON document on stdout for scripts (no progress display)');
}

export function cliConfig(o: ConnectionOptions, overrides: Partial<DaemonConfig> = {}): DaemonConfig {
  return defaultDaemonConfig(process.env, { ...(o.service ? { serviceUrl: o.service } : {}), ...overrides });
}

export function clientProvider(config: DaemonConfig): ApiKeyProvider {
  return new ApiKeyProvider({
    serviceUrl: config.serviceUrl,
    keychain: new KeytarKeychain(),
    clientOptions: { userAgent: `renderbridge-cli/${VERSION}` },
  });
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
