// One setting of `renderbridge service` and `renderbridge worker`: what the settings table
// (service/settings/table.ts) holds for each, and the names derived from it.
import type { Kind } from './kinds.js';

export type SettingCommand = 'service' | 'worker';

export const SETTING_GROUPS = [
  'Listening and URLs',
  'Limits',
  'Retention',
  'Logging',
  'Engines',
  'Render slots',
  'Unpacking and the blob cache',
  'Content-addressed uploads',
  'Dashboard sessions',
  'Remote worker',
] as const;
export type SettingGroup = (typeof SETTING_GROUPS)[number];

export interface Setting {
  /** Key in the config file: a ServiceConfig field, `s3.<field>` for S3Settings, else the worker process's own. */
  key: string;
  /**
   * Flag with its placeholder (`--rate-limit <n>`); none for secrets, which never go on a command line (ps shows it).
   */
  flag?: string;
  /** Environment variable. Default: RENDERBRIDGE_ and the flag in upper snake case. */
  env?: string;
  kind: Kind;
  help: string;
  /** The default as --help and docs/reference/configuration.md show it. */
  defaultText: string;
  group: SettingGroup;
  commands: readonly SettingCommand[];
  /** Never printed: `value` entirely, `url` its password. */
  secret?: 'value' | 'url';
}

// Which commands take a setting.
export const BOTH = ['service', 'worker'] as const;
export const SERVICE = ['service'] as const;
export const WORKER = ['worker'] as const;

/** `--rate-limit` of `--rate-limit <n>`. */
export function longFlag(s: Setting): string | undefined {
  return s.flag?.split(' ')[0];
}

/** The variable of a setting: given, or RENDERBRIDGE_ and its flag in upper snake case. */
export function envName(s: Setting): string {
  if (s.env) return s.env;
  const long = longFlag(s)!.replace(/^--(no-)?/, '');
  return `RENDERBRIDGE_${long.replace(/-/g, '_').toUpperCase()}`;
}
