// What the client commands (submit, jobs) share: the service URL and the API key, read the way
// the daemon reads them (config.toml's active profile, its OS keychain entry, else RENDERBRIDGE_API_KEY).
import type { Command } from 'commander';
import { ApiKeyProvider } from '../daemon/keychain/api-key.js';
import { defaultDaemonConfig, type DaemonConfig } from '../daemon/config.js';
import { KeytarKeychain } from '../daemon/keychain/keytar.js';
import { keychainEntryFor } from '../user-config/keychain-entry.js';
import type { SettingName } from '../user-config/settings.js';
import type { OutputOptions } from './output.js';
import { resolveUserSettings, type ProfileOption } from './user-settings.js';
import { VERSION } from './version.js';

export interface ConnectionOptions extends OutputOptions {
  service?: string;
}

/** Adds --service, --json, --fields and --quiet to a client command. */
export function withConnectionOptions(cmd: Command): Command {
  return cmd
    .option(
      '--service <url>',
      'service URL: a bare origin such as http://farm:8420 (the API prefix /api/external/v1 is added) or the ' +
        "API root (env: RENDERBRIDGE_SERVICE_URL; else the profile's serviceUrl; default the bundled service " +
        'on 127.0.0.1:8420)',
    )
    .option('--json', 'print one JSON document on stdout for scripts, errors included (no progress display)')
    .option(
      '--fields <list>',
      'with --json: only these fields, comma-separated, dotted paths allowed (e.g. id,status,job.status)',
    )
    .option('--quiet', 'print nothing but errors');
}

/**
 * The settings of the active profile (flag > env > profile > default); a bad value is a usage
 * error naming its source. `flags`: the command's own flags of settings (submit's --format).
 */
export function cliConfig(
  o: ConnectionOptions & ProfileOption,
  overrides: Partial<DaemonConfig> = {},
  flags: Partial<Record<SettingName, unknown>> = {},
): DaemonConfig {
  return defaultDaemonConfig(process.env, overrides, resolveUserSettings(o, { serviceUrl: o.service, ...flags }));
}

export function clientProvider(config: DaemonConfig): ApiKeyProvider {
  return new ApiKeyProvider({
    serviceUrl: config.serviceUrl,
    keychain: new KeytarKeychain(keychainEntryFor(config.profile)),
    clientOptions: { userAgent: `renderbridge-cli/${VERSION}`, reconnectPatienceMs: config.reconnectPatience * 1000 },
  });
}
