// How every command reads the per-user config: locate config.toml, load it, resolve the active
// profile and each setting (flag > env > profile > default). A config problem is a usage error
// (exit 2) whose message names the setting and its source.
import { ConfigError } from '../user-config/errors.js';
import { loadConfigFile } from '../user-config/file.js';
import { locateUserFiles, type UserLocation } from '../user-config/locate.js';
import { resolveConfig, type ResolvedConfig } from '../user-config/resolve.js';
import type { SettingName } from '../user-config/settings.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';

export interface ProfileOption {
  /** The global --profile (copied onto each command's options by cli/index.ts). */
  profile?: string;
}

/** Runs `fn`, turning a ConfigError into a usage error. */
export function configOrUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.USAGE);
    throw err;
  }
}

export function resolveUserSettings(
  o: ProfileOption,
  flags: Partial<Record<SettingName, unknown>> = {},
  options: { allowMissingProfile?: boolean; where?: UserLocation } = {},
): ResolvedConfig {
  const where = options.where ?? locateUserFiles();
  return configOrUsage(() =>
    resolveConfig({
      config: loadConfigFile(where.configFile),
      env: where.env,
      home: where.home,
      flags,
      ...(o.profile ? { profileFlag: o.profile } : {}),
      allowMissingProfile: options.allowMissingProfile ?? false,
    }),
  );
}
