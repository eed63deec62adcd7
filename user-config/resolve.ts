// The one precedence rule of every program (CLI, daemon, tray): flag > environment > profile >
// default. Each value carries where it came from, and a bad value is an error naming the setting
// and that source; nothing falls back silently.
import { ConfigError } from './errors.js';
import type { LoadedConfig } from './file.js';
import { DEFAULT_PROFILE, type Profile } from './schema.js';
import { PROFILE_ENV, SETTING_NAMES, SETTINGS, type SettingName, type SettingValues } from './settings.js';

export interface Resolved<T> {
  value: T;
  /** `flag --service`, `env RENDERBRIDGE_SERVICE_URL`, `profile "studio" in /path/config.toml` or `default`. */
  source: string;
}

export type ResolvedSettings = { [K in SettingName]: Resolved<SettingValues[K]> };

export interface ResolvedConfig {
  profile: Resolved<string>;
  /** Whether the profile is written in the file (the default profile need not be). */
  profileInFile: boolean;
  file: LoadedConfig;
  settings: ResolvedSettings;
}

export interface ResolveInput {
  config: LoadedConfig;
  env: NodeJS.ProcessEnv;
  home: string;
  /** Values given on the command line, by setting (undefined: not given). */
  flags?: Partial<Record<SettingName, unknown>>;
  /** --profile. */
  profileFlag?: string;
  /** Accept a profile the file does not have yet (login creates it). Default false. */
  allowMissingProfile?: boolean;
}

export function resolveProfile(input: Pick<ResolveInput, 'config' | 'env' | 'profileFlag'>): Resolved<string> {
  if (input.profileFlag) return { value: input.profileFlag, source: 'flag --profile' };
  const env = input.env[PROFILE_ENV]?.trim();
  if (env) return { value: env, source: `env ${PROFILE_ENV}` };
  const fromFile = input.config.data.defaultProfile;
  if (fromFile) return { value: fromFile, source: `defaultProfile in ${input.config.path}` };
  return { value: DEFAULT_PROFILE, source: 'default' };
}

export function resolveConfig(input: ResolveInput): ResolvedConfig {
  const profile = resolveProfile(input);
  const written: Profile | undefined = input.config.data.profiles?.[profile.value];
  if (!written && profile.value !== DEFAULT_PROFILE && !input.allowMissingProfile) {
    throw new ConfigError(
      `profile "${profile.value}" (from ${profile.source}) is not in ${input.config.path}: create it with ` +
        `\`renderbridge config set --profile ${profile.value} serviceUrl URL\` or \`renderbridge login ` +
        `--profile ${profile.value} --service URL\``,
      'profile',
    );
  }
  const settings = {} as Record<SettingName, Resolved<unknown>>;
  for (const name of SETTING_NAMES) settings[name] = resolveOne(name, input, profile.value, written);
  return { profile, profileInFile: Boolean(written), file: input.config, settings: settings as ResolvedSettings };
}

function resolveOne(
  name: SettingName,
  input: ResolveInput,
  profileName: string,
  written: Profile | undefined,
): Resolved<unknown> {
  const def = SETTINGS[name];
  const candidates: { raw: unknown; source: string }[] = [];
  const flag = input.flags?.[name];
  if (flag !== undefined && def.flag) candidates.push({ raw: flag, source: `flag ${def.flag}` });
  const env = def.env ? input.env[def.env] : undefined;
  // An empty variable counts as unset, as it always did for these variables.
  if (def.env && env !== undefined && env !== '') candidates.push({ raw: env, source: `env ${def.env}` });
  const fromProfile = def.inProfile ? (written as Record<string, unknown> | undefined)?.[name] : undefined;
  if (fromProfile !== undefined)
    candidates.push({ raw: fromProfile, source: `profile "${profileName}" in ${input.config.path}` });
  const chosen = candidates[0];
  if (!chosen) return { value: def.default(input.home), source: 'default' };
  try {
    return { value: def.parse(chosen.raw, input.home), source: chosen.source };
  } catch (err) {
    throw new ConfigError(`${name} (from ${chosen.source}): ${(err as Error).message}`, name);
  }
}
