// The service settings table (service/settings/table.ts) on a commander command: one option per
// setting the command's own modules do not add, `--config` and `--print-config`, and the config
// file layered under flags and environment. Precedence, for every setting:
// flag > environment variable > config file > default.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ServiceConfig } from '../service/config.js';
import { loadConfigFile, type LoadedConfigFile } from '../service/settings/config-file.js';
import { parseValue } from '../service/settings/kinds.js';
import { envName, longFlag, type Setting, type SettingCommand } from '../service/settings/setting.js';
import { settingsOf } from '../service/settings/table.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';

/** Settings of the `worker` process itself, not of ServiceConfig. */
export const WORKER_PROCESS_KEYS = ['serviceUrls', 'workerName', 'metricsPort', 'metricsHost'] as const;

interface State {
  command: SettingCommand;
  /** Keys whose option this module added (their values become ServiceConfig fields in tableConfig). */
  registered: Map<string, string>;
  file?: LoadedConfigFile;
}
const states = new WeakMap<Command, State>();

function parserOf(s: Setting) {
  return (v: string, previous?: unknown): unknown => {
    try {
      const value = parseValue(s.kind, v);
      return s.kind.type === 'list' ? [...((previous as string[] | undefined) ?? []), ...(value as string[])] : value;
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

function optionFor(s: Setting, defaults: Record<string, unknown>): Option {
  const value = s.kind.type === 'list' ? [] : defaults[s.key];
  // Commander shows a default only when there is a value: say what happens without one.
  const opt = new Option(s.flag!, value === undefined ? `${s.help} (default: ${s.defaultText})` : s.help)
    .env(envName(s))
    .argParser(parserOf(s));
  if (s.kind.type === 'choice') opt.choices(s.kind.values);
  return opt.default(value, s.defaultText);
}

/**
 * Adds the table's options the command lacks, plus --config and --print-config. `defaults`: the
 * values behind each key when nothing sets it (defaultConfig(), and the worker process's own).
 */
export function addSettingOptions(cmd: Command, command: SettingCommand, defaults: Record<string, unknown>): Command {
  const st: State = { command, registered: new Map() };
  states.set(cmd, st);
  cmd
    .addOption(
      new Option(
        '--config <file>',
        'JSON config file of settings (keys as in docs/reference/configuration.md); flags and environment ' +
          'variables beat it',
      ).env('RENDERBRIDGE_CONFIG'),
    )
    .option(
      '--print-config',
      'print every setting with its value and where it came from (secrets redacted), then exit',
    );
  for (const s of settingsOf(command)) {
    const long = longFlag(s);
    if (!long || cmd.options.some((o) => o.long === long)) continue;
    const opt = optionFor(s, defaults);
    cmd.addOption(opt);
    st.registered.set(s.key, opt.attributeName());
  }
  // Before the action: the file fills in what neither a flag nor a variable set.
  cmd.hook('preAction', async (c) => {
    const file = c.getOptionValue('config') as string | undefined;
    if (!file) return;
    try {
      st.file = await loadConfigFile(file);
    } catch (err) {
      throw new CliError((err as Error).message, EXIT.USAGE);
    }
    for (const s of settingsOf(command)) {
      const value = st.file.values.get(s.key);
      const opt = optionOf(c, s);
      if (value === undefined || !opt || fromEnv(s)) continue;
      const src = c.getOptionValueSource(opt.attributeName());
      if (src === undefined || src === 'default') c.setOptionValueWithSource(opt.attributeName(), value, 'config');
    }
  });
  return cmd;
}

function optionOf(cmd: Command, s: Setting): Option | undefined {
  const long = longFlag(s);
  return long ? cmd.options.find((o) => o.long === long) : undefined;
}

function fromEnv(s: Setting): boolean {
  const v = process.env[envName(s)];
  return v !== undefined && v !== '';
}

function state(cmd: Command): State {
  const s = states.get(cmd);
  if (!s) throw new Error('addSettingOptions was not called on this command');
  return s;
}

/**
 * The ServiceConfig fields of the options addSettingOptions added, plus the unflagged secrets (environment, else file).
 */
export function tableConfig(cmd: Command): Partial<ServiceConfig> {
  const st = state(cmd);
  const out: Record<string, unknown> = {};
  for (const [key, attr] of st.registered) {
    if ((WORKER_PROCESS_KEYS as readonly string[]).includes(key)) continue;
    out[key] = cmd.getOptionValue(attr);
  }
  for (const s of settingsOf(st.command).filter((x) => !x.flag && !x.key.startsWith('s3.'))) {
    out[s.key] = fromEnv(s) ? process.env[envName(s)] : st.file?.values.get(s.key);
  }
  return out as Partial<ServiceConfig>;
}

/** S3 credentials from the config file (the AWS SDK reads its own variables, which beat the file). */
export function s3Credentials(cmd: Command): { accessKeyId: string; secretAccessKey: string } | undefined {
  const file = state(cmd).file?.values;
  const id = file?.get('s3.accessKeyId') as string | undefined;
  const secret = file?.get('s3.secretAccessKey') as string | undefined;
  if (process.env.AWS_ACCESS_KEY_ID || !id || !secret) return undefined;
  return { accessKeyId: id, secretAccessKey: secret };
}

/** Where a setting's value came from: `flag --x`, `env NAME`, `file PATH` or `default`. */
export function sourceOf(cmd: Command, s: Setting): string {
  const st = state(cmd);
  const opt = optionOf(cmd, s);
  const src = opt ? cmd.getOptionValueSource(opt.attributeName()) : undefined;
  if (src === 'cli') return `flag ${longFlag(s)}`;
  if (src === 'env' || fromEnv(s)) return `env ${envName(s)}`;
  if (src === 'config' || (!opt && st.file?.values.has(s.key))) return `file ${st.file!.path}`;
  return 'default';
}

function shown(s: Setting, value: unknown): string {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return '(none)';
  if (s.secret === 'value') return '[redacted]';
  if (s.secret === 'url' && typeof value === 'string') {
    try {
      const u = new URL(value);
      if (u.password) u.password = 'redacted';
      return u.toString();
    } catch {
      return '[redacted]';
    }
  }
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/**
 * `--print-config`: one line per setting, `key = value (source)`, in the table's order. `values`
 * reads a key of the effective config (ServiceConfig, or the worker process's own).
 */
export function formatEffectiveConfig(cmd: Command, values: (key: string) => unknown): string {
  const st = state(cmd);
  const rows = settingsOf(st.command).map((s) => {
    const source = sourceOf(cmd, s);
    // A variable read by a library, not by us (AWS_ACCESS_KEY_ID): still say that it is set.
    const value = values(s.key) ?? (source.startsWith('env ') ? process.env[envName(s)] : undefined);
    return [s.key, shown(s, value), source] as const;
  });
  const width = Math.max(...rows.map((r) => r[0].length));
  const header = st.file ? `# config file: ${st.file.path}\n` : '# no config file (--config / RENDERBRIDGE_CONFIG)\n';
  return header + rows.map(([k, v, src]) => `${k.padEnd(width)} = ${v}  (${src})`).join('\n') + '\n';
}

/** A key of a ServiceConfig, `s3.bucket` included. */
export function configValue(config: ServiceConfig, key: string): unknown {
  const [head, tail] = key.split('.') as [keyof ServiceConfig, string | undefined];
  const v = config[head];
  return tail ? (v as Record<string, unknown> | undefined)?.[tail] : v;
}
