// Reading and writing config.toml: parsed with smol-toml, checked with ConfigData. Every error
// names the file, the key and (where it can be found) the line. Writes are atomic (a temporary
// file renamed over the old one) so a crash or a watcher never sees half a file.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { ConfigError } from './errors.js';
import { ConfigData } from './schema.js';

export interface LoadedConfig {
  /** Absolute path of config.toml. */
  path: string;
  /** False when the file does not exist (then `data` is empty). */
  exists: boolean;
  data: ConfigData;
}

/** Reads and checks the file; a missing file is an empty config, anything wrong is a ConfigError. */
export function loadConfigFile(file: string): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path: file, exists: false, data: {} };
    throw new ConfigError(`${file}: cannot be read (${(err as Error).message})`);
  }
  return { path: file, exists: true, data: parseConfigText(text, file) };
}

export function parseConfigText(text: string, file: string): ConfigData {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    if (err instanceof TomlError)
      throw new ConfigError(`${file}:${err.line}: not valid TOML (${err.message.split('\n')[0]})`);
    throw err;
  }
  const checked = ConfigData.safeParse(raw);
  if (!checked.success)
    throw new ConfigError(describeIssues(checked.error, text, file), keyOf(checked.error.issues[0]));
  return checked.data;
}

/** Checks `data`, then writes it atomically, creating the folder. */
export function writeConfigFile(file: string, data: ConfigData): void {
  const checked = ConfigData.safeParse(data);
  if (!checked.success) throw new ConfigError(describeIssues(checked.error, '', file), keyOf(checked.error.issues[0]));
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${stringify(checked.data)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

function keyOf(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return '';
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  return [...issue.path.map(String), ...keys.slice(0, 1)].join('.');
}

function describeIssues(error: z.ZodError, text: string, file: string): string {
  return error.issues
    .map((issue) => {
      const key = keyOf(issue);
      const line = lineOf(text, key.split('.'));
      const what = issue.code === 'unrecognized_keys' ? `unknown key "${key}"` : `"${key}": ${issue.message}`;
      return `${file}${line ? `:${line}` : ''}: ${what}`;
    })
    .join('\n');
}

/**
 * The line where `keys` (e.g. profiles, studio, serviceUrl) is set: the last key's `name =` line
 * after the header of its table, else its first `name =` line. smol-toml keeps no positions of
 * values, and config files are small and flat, so a scan finds it.
 */
export function lineOf(text: string, keys: string[]): number | undefined {
  if (!text || keys.length === 0) return undefined;
  const lines = text.split('\n');
  const last = keys[keys.length - 1]!;
  const keyRe = new RegExp(`^\\s*["']?${escape(last)}["']?\\s*=`);
  const table = keys.slice(0, -1).join('.');
  let start = 0;
  if (table) {
    const headerRe = new RegExp(`^\\s*\\[\\s*${escape(table).replace(/\\\./g, '\\s*\\.\\s*')}\\s*\\]`);
    const h = lines.findIndex((l) => headerRe.test(l));
    if (h >= 0) {
      if (!keyRe.test(lines[h + 1] ?? '') && lines.slice(h + 1).findIndex((l) => keyRe.test(l)) < 0) return h + 1;
      start = h + 1;
    }
  }
  for (let i = start; i < lines.length; i++) {
    if (table && i > start && /^\s*\[/.test(lines[i]!)) break;
    if (keyRe.test(lines[i]!)) return i + 1;
  }
  const anywhere = lines.findIndex((l) => keyRe.test(l));
  return anywhere >= 0 ? anywhere + 1 : undefined;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
