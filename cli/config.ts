// `renderbridge config get|set|list|path`: read and edit config.toml. `set` writes into the
// active profile (created if needed), checks the value with the same parser every program uses,
// and writes the file atomically; `list` shows each setting with its value and its source.
import type { Command } from 'commander';
import { parse as parseToml } from 'smol-toml';
import { loadConfigFile, writeConfigFile } from '../user-config/file.js';
import { locateUserFiles } from '../user-config/locate.js';
import { resolveProfile } from '../user-config/resolve.js';
import { isSettingName, SETTING_NAMES, SETTINGS } from '../user-config/settings.js';
import { ProfileName, type Profile } from '../user-config/schema.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { printJson } from './output.js';
import { configOrUsage, resolveUserSettings, type ProfileOption } from './user-settings.js';

interface ConfigOptions extends ProfileOption {
  json?: boolean;
}

const KEYS = `keys: defaultProfile, ${SETTING_NAMES.filter((n) => SETTINGS[n].inProfile).join(', ')}`;

function show(value: unknown): string {
  if (value === null) return '(none)';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A typed value for the file from what was typed: TOML syntax where it parses (true, 64, { a = 1 }), else the text. */
function fileValue(key: string, raw: string): unknown {
  if (
    key === 'serviceUrl' ||
    key === 'downloadsDir' ||
    key === 'hotFolder' ||
    key === 'blender' ||
    key === 'outputFormat'
  )
    return raw;
  try {
    return (parseToml(`v = ${raw}`) as { v: unknown }).v;
  } catch {
    return raw;
  }
}

export function registerConfigCommand(program: Command): void {
  const config = program
    .command('config')
    .description(`Read and edit the per-user config file (config.toml) and its profiles (${KEYS})`);

  config
    .command('path')
    .description('Print where config.toml is (it need not exist yet)')
    .option('--json', 'print JSON')
    .action((o: ConfigOptions) => {
      const where = locateUserFiles();
      const exists = configOrUsage(() => loadConfigFile(where.configFile)).exists;
      if (o.json) return printJson({ path: where.configFile, exists });
      console.log(where.configFile);
    });

  config
    .command('list')
    .description(
      'Show every setting of the active profile with its value and where it came from (flag, env, profile or default)',
    )
    .option('--json', 'print JSON')
    .action((o: ConfigOptions) => {
      const r = resolveUserSettings(o);
      if (o.json)
        return printJson({ file: r.file.path, fileExists: r.file.exists, profile: r.profile, settings: r.settings });
      console.log(`file:    ${r.file.path}${r.file.exists ? '' : ' (not created yet)'}`);
      console.log(`profile: ${r.profile.value}  (${r.profile.source})`);
      for (const name of SETTING_NAMES)
        console.log(`${name.padEnd(13)} ${show(r.settings[name].value)}  (${r.settings[name].source})`);
    });

  config
    .command('get <key>')
    .description(`Print one setting's value as the programs use it (${KEYS}, daemonPort)`)
    .option('--json', 'print JSON with the source')
    .action((key: string, o: ConfigOptions) => {
      const r = resolveUserSettings(o);
      const got =
        key === 'defaultProfile' || key === 'profile' ? r.profile : isSettingName(key) ? r.settings[key] : undefined;
      if (!got) throw new CliError(`unknown key "${key}" (${KEYS}, daemonPort)`, EXIT.USAGE);
      if (o.json) return printJson({ key, value: got.value, source: got.source });
      console.log(show(got.value));
    });

  config
    .command('set <key> <value>')
    .description(
      `Write a setting into the active profile (or defaultProfile at the top) of config.toml, checked first (${KEYS})`,
    )
    .option('--json', 'print JSON')
    .action((key: string, raw: string, o: ConfigOptions) => {
      const where = locateUserFiles();
      const file = configOrUsage(() => loadConfigFile(where.configFile));
      const data = structuredClone(file.data);
      let profile: string | undefined;
      if (key === 'defaultProfile') {
        if (!ProfileName.safeParse(raw).success)
          throw new CliError(
            `defaultProfile: "${raw}" is not a profile name (letters, digits, "-" and "_")`,
            EXIT.USAGE,
          );
        data.defaultProfile = raw;
      } else {
        if (!isSettingName(key) || !SETTINGS[key].inProfile) {
          const hint =
            key === 'daemonPort'
              ? ': daemonPort is not kept in profiles (use --port or RENDERBRIDGE_DAEMON_PORT)'
              : ` (${KEYS})`;
          throw new CliError(`unknown key "${key}"${hint}`, EXIT.USAGE);
        }
        profile = configOrUsage(() =>
          resolveProfile({ config: file, env: process.env, ...(o.profile ? { profileFlag: o.profile } : {}) }),
        ).value;
        const value = fileValue(key, raw);
        try {
          SETTINGS[key].parse(value, where.home);
        } catch (err) {
          throw new CliError(
            `${key} (from the command line): ${(err as Error).message}; ${where.configFile} was not changed`,
            EXIT.USAGE,
          );
        }
        const profiles = (data.profiles ??= {});
        profiles[profile] = { ...profiles[profile], [key]: value } as Profile;
      }
      configOrUsage(() => writeConfigFile(where.configFile, data));
      if (o.json)
        return printJson({
          file: where.configFile,
          key,
          value: key === 'defaultProfile' ? raw : fileValue(key, raw),
          profile: profile ?? null,
        });
      console.log(`${where.configFile}: ${profile ? `profile "${profile}" ` : ''}${key} = ${raw}`);
    });
}
