// The service's config file (`--config PATH` / RENDERBRIDGE_CONFIG): one JSON object whose keys
// are the settings' keys (ServiceConfig fields, `s3` nested). Its schema is built from the table,
// so a key the table lacks, a wrong type or an out-of-range value is refused naming the key, the
// file and what is allowed. One file may serve service and worker: a key of the other command is
// accepted and left alone.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { allowed, schemaOf } from './kinds.js';
import type { Setting } from './setting.js';
import { SETTINGS } from './table.js';

/** Settings from a file, by key (`s3.bucket`), already in each setting's unit. */
export interface LoadedConfigFile {
  /** Absolute path. */
  path: string;
  values: Map<string, unknown>;
}

export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

function schemaFor(s: Setting, dir: string): z.ZodType<unknown> {
  const base = schemaOf(s.kind);
  // A relative path in the file means "beside the file", wherever the command runs from.
  if (s.kind.type === 'path') return base.transform((v) => path.resolve(dir, v as string));
  if (s.kind.type === 'list' && s.kind.paths)
    return base.transform((v) => (v as string[]).map((p) => path.resolve(dir, p)));
  return base;
}

/** The file's schema: strict objects (unknown keys refused), every key optional. */
export function configFileSchema(dir: string): z.ZodType<Record<string, unknown>> {
  const top: Record<string, z.ZodType<unknown>> = {};
  const s3: Record<string, z.ZodType<unknown>> = {};
  for (const s of SETTINGS) {
    const [head, tail] = s.key.split('.') as [string, string | undefined];
    if (tail) s3[tail] = schemaFor(s, dir).optional();
    else top[head] = schemaFor(s, dir).optional();
  }
  return z.strictObject({ ...top, s3: z.strictObject(s3).optional() }) as unknown as z.ZodType<Record<string, unknown>>;
}

function describeIssue(file: string, issue: z.core.$ZodIssue): string {
  const where = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => (where ? `${where}.${k}` : k));
    const known = SETTINGS.filter((s) => (where ? s.key.startsWith(`${where}.`) : true)).map((s) => s.key);
    return `${file}: unknown key ${keys.map((k) => `"${k}"`).join(', ')}; the keys are: ${known.join(', ')}`;
  }
  const setting = SETTINGS.find((s) => s.key === where);
  if (issue.code === 'invalid_type' && !setting) return `${file}: "${where || '(top)'}" must be an object of settings`;
  return (
    `${file}: key "${where}": ` +
    `${setting && issue.code !== 'custom' ? `expected ${allowed(setting.kind)}` : issue.message}`
  );
}

export async function loadConfigFile(file: string): Promise<LoadedConfigFile> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (err) {
    throw new ConfigFileError(`cannot read the config file ${abs}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigFileError(`the config file ${abs} is not JSON: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigFileError(
      `the config file ${abs} must hold one JSON object of settings, e.g. {"rateLimitMax": 600}`,
    );
  }
  const r = configFileSchema(path.dirname(abs)).safeParse(data);
  if (!r.success) throw new ConfigFileError(r.error.issues.map((i) => describeIssue(abs, i)).join('\n'));
  const values = new Map<string, unknown>();
  for (const [k, v] of Object.entries(r.data)) {
    if (k === 's3' && v) for (const [k2, v2] of Object.entries(v as object)) values.set(`s3.${k2}`, v2);
    else if (v !== undefined) values.set(k, v);
  }
  return { path: abs, values };
}
