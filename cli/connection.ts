// What the client commands (submit, jobs) share: the service URL and the API key, read the way
// the daemon reads them (OS keychain entry of the tray app, else RENDERBRIDGE_API_KEY).
import type { Command } from 'commander';
import { ApiKeyProvider } from '../daemon/keychain/api-key.js';
import { defaultDaemonConfig, type DaemonConfig } from '../daemon/config.js';
import { KeytarKeychain } from '../daemon/keychain/keytar.js';
import { normalizeServiceUrl } from '../shared/service-url.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { OutputOptions } from './output.js';
import { VERSION } from './version.js';

export interface ConnectionOptions extends OutputOptions {
  service?: string;
}

/** Adds --service, --json, --fields and --quiet to a client command. */
export function withConnectionOptions(cmd: Command): Command {
  return cmd
    .option('--service <url>', 'service URL: a bare origin such as http://farm:8420 (the API prefix /api/external/v1 is added) or the API root (default: RENDERBRIDGE_SERVICE_URL or the bundled service on 127.0.0.1:8420)')
    .option('--json', 'print one JSON document on stdout for scripts, errors included (no progress display)')
    .option('--fields <list>', 'with --json: only these fields, comma-separated, dotted paths allowed (e.g. id,status,job.status)')
    .option('--quiet', 'print nothing but errors');
}

export function cliConfig(o: ConnectionOptions, overrides: Partial<DaemonConfig> = {}): DaemonConfig {
  const config = defaultDaemonConfig(process.env, { ...(o.service ? { serviceUrl: o.service } : {}), ...overrides });
  // The flag and RENDERBRIDGE_SERVICE_URL both accept a bare origin, so both are normalised here.
  try {
    return { ...config, serviceUrl: normalizeServiceUrl(config.serviceUrl) };
  } catch (err) {
    throw new CliError(`${o.service ? '--service' : 'RENDERBRIDGE_SERVICE_URL'}: ${(err as Error).message}`, EXIT.USAGE);
  }
}

export function clientProvider(config: DaemonConfig): ApiKeyProvider {
  return new ApiKeyProvider({
    serviceUrl: config.serviceUrl,
    keychain: new KeytarKeychain(),
    clientOptions: { userAgent: `renderbridge-cli/${VERSION}` },
  });
}
