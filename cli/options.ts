import path from 'node:path';

/** Default data folder: RENDERBRIDGE_DATA_DIR, else ./.renderbridge/service. */
export function defaultDataDir(): string {
  return process.env.RENDERBRIDGE_DATA_DIR ?? path.join('.renderbridge', 'service');
}

export function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`invalid port: ${v}`);
  return n;
}

export function parsePositiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`expected a positive whole number, got ${v}`);
  return n;
}
