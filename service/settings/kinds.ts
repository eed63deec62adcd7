// The kinds of value a service setting takes, each as one zod schema that accepts both a
// command-line or environment string ("8MiB", "15m", "true") and a config file's JSON value
// (8388608, "8MiB", true), and says in words what it allows, for errors, --help and docs/reference/configuration.md.
import { z } from 'zod';

export type Kind =
  | { type: 'text' }
  /** An absolute http(s) URL (or postgres://, redis://: any scheme). */
  | { type: 'url' }
  /** A file or folder; in a config file, relative to the file's folder. */
  | { type: 'path' }
  | { type: 'int'; min: number; max?: number }
  /** A number above `above` (e.g. days above 0). */
  | { type: 'number'; above: number }
  | { type: 'bytes'; min: number; max?: number }
  /** A duration in `unit`: a bare number is in that unit, or one with a suffix (500ms, 90s, 15m, 6h, 1d). */
  | { type: 'duration'; unit: 'ms' | 's'; min: number }
  | { type: 'bool' }
  | { type: 'choice'; values: readonly string[] }
  /** Several texts: a repeatable flag, a comma-separated variable, an array in the file. */
  | { type: 'list'; paths?: boolean }
  /** `auto` or a whole number >= 0. */
  | { type: 'workers' };

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };
const MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

function size(n: number): string {
  for (const [unit, f] of [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= f && n % f === 0) return `${n / f}${unit}`;
  }
  return String(n);
}

/** What a kind allows, in words: the end of every error about a bad value. */
export function allowed(kind: Kind): string {
  switch (kind.type) {
    case 'text':
      return 'a non-empty text';
    case 'url':
      return 'a URL with a scheme, e.g. https://render.example.com';
    case 'path':
      return 'a file or folder path';
    case 'int':
      return kind.max === undefined
        ? `a whole number from ${kind.min} up`
        : `a whole number from ${kind.min} to ${kind.max}`;
    case 'number':
      return `a number above ${kind.above}`;
    case 'bytes':
      return (
        `a size from ${size(kind.min)}${kind.max === undefined ? ' up' : ` to ${size(kind.max)}`}: bytes, or ` +
        `with a unit (500MiB, 8GiB)`
      );
    case 'duration':
      return (
        `a duration of at least ${kind.min} ${kind.unit === 's' ? 'seconds' : 'ms'}: a number ` +
        `of ${kind.unit === 's' ? 'seconds' : 'milliseconds'}, or with a unit (500ms, 90s, 15m, 6h, 1d)`
      );
    case 'bool':
      return 'true or false (also 1/0, yes/no, on/off)';
    case 'choice':
      return `one of ${kind.values.join(', ')}`;
    case 'list':
      return 'a list: the flag repeated, a comma-separated variable, an array in the file';
    case 'workers':
      return '"auto" or a whole number from 0 up';
  }
}

function numeric(raw: unknown): number {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'string' && raw.trim() !== '') return Number(raw.trim());
  return NaN;
}

function parseBytes(raw: unknown): number {
  if (typeof raw === 'number') return raw;
  const m = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(raw) : null;
  const unit = m ? BYTE_UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  return m && unit !== undefined ? Math.round(Number(m[1]) * unit) : NaN;
}

function parseDuration(raw: unknown, unit: 'ms' | 's'): number {
  if (typeof raw === 'number') return raw;
  const m = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(raw) : null;
  if (!m) return NaN;
  const suffix = (m[2] ?? '').toLowerCase();
  if (suffix === '') return Number(m[1]);
  const ms = MS[suffix];
  return ms === undefined ? NaN : (Number(m[1]) * ms) / (unit === 's' ? 1000 : 1);
}

function parseBool(raw: unknown): boolean | undefined {
  if (typeof raw === 'boolean') return raw;
  const t = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  if (['0', 'false', 'no', 'off'].includes(t)) return false;
  return undefined;
}

/** The value, or undefined when `raw` is not one of the kind (the schema then reports `allowed`). */
function convert(kind: Kind, raw: unknown): unknown {
  switch (kind.type) {
    case 'text':
    case 'path':
      return typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : undefined;
    case 'url':
      return typeof raw === 'string' && /^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(raw.trim())
        ? raw.trim().replace(/\/+$/, '')
        : undefined;
    case 'int': {
      const n = numeric(raw);
      return Number.isSafeInteger(n) && n >= kind.min && (kind.max === undefined || n <= kind.max) ? n : undefined;
    }
    case 'number': {
      const n = numeric(raw);
      return Number.isFinite(n) && n > kind.above ? n : undefined;
    }
    case 'bytes': {
      const n = parseBytes(raw);
      return Number.isSafeInteger(n) && n >= kind.min && (kind.max === undefined || n <= kind.max) ? n : undefined;
    }
    case 'duration': {
      const n = parseDuration(raw, kind.unit);
      return Number.isFinite(n) && n >= kind.min ? n : undefined;
    }
    case 'bool':
      return parseBool(raw);
    case 'choice':
      return typeof raw === 'string' && kind.values.includes(raw.trim()) ? raw.trim() : undefined;
    case 'list': {
      const items = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) ? raw : undefined;
      if (!items || !items.every((i) => typeof i === 'string')) return undefined;
      return (items as string[]).map((i) => i.trim()).filter((i) => i !== '');
    }
    case 'workers': {
      if (raw === 'auto') return 'auto';
      const n = numeric(raw);
      return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
    }
  }
}

/** The zod schema of a kind: any input, the setting's value out, or an issue saying what is allowed. */
export function schemaOf(kind: Kind): z.ZodType<unknown> {
  return z.unknown().transform((raw, ctx) => {
    const value = convert(kind, raw);
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: `expected ${allowed(kind)}, got ${JSON.stringify(raw)}` });
      return z.NEVER;
    }
    return value;
  });
}

/** Parses one value, throwing an Error whose message says what the kind allows. */
export function parseValue(kind: Kind, raw: unknown): unknown {
  const r = schemaOf(kind).safeParse(raw);
  if (!r.success) throw new Error(r.error.issues[0]?.message ?? `expected ${allowed(kind)}`);
  return r.data;
}
