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

/** `--workers`: `auto`, or a whole number >= 0 (0 = no worker in this process). */
export function parseWorkers(v: string): number | 'auto' {
  if (v === 'auto') return 'auto';
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--workers takes "auto" or a whole number >= 0, got ${v}`);
  return n;
}

/** Collects a repeatable option (`--blender A --blender B`). */
export function collect(v: string, previous: string[] = []): string[] {
  return [...previous, v];
}
