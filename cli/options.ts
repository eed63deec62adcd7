import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { defaultDataDir } from '../service/config-defaults.js';

/** The default of every `--data-dir` that means the service's data folder, for help texts. */
export const DATA_DIR_DEFAULT =
  '$RENDERBRIDGE_DATA_DIR, else $XDG_DATA_HOME/renderbridge/service, i.e. ~/.local/share/renderbridge/service';

export interface ResolvedDataDir {
  /** Absolute path. */
  dir: string;
  /** What chose it, for the line naming it. */
  from: '--data-dir' | 'RENDERBRIDGE_DATA_DIR' | 'default';
}

/**
 * The service's data folder, resolved the same way by `service`, `worker` and every `admin`
 * command: `--data-dir`, else RENDERBRIDGE_DATA_DIR, else defaultDataDir() (never the current
 * folder). A relative flag or variable is taken from the current folder, as typed.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedDataDir {
  if (flag) return { dir: path.resolve(flag), from: '--data-dir' };
  if (env.RENDERBRIDGE_DATA_DIR) return { dir: path.resolve(env.RENDERBRIDGE_DATA_DIR), from: 'RENDERBRIDGE_DATA_DIR' };
  return { dir: defaultDataDir(env), from: 'default' };
}

// InvalidArgumentError: commander then reports the flag and exits as a usage error (exit 2).
export function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`invalid port: ${v}`);
  return n;
}

export function parsePositiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`expected a positive whole number, got ${v}`);
  return n;
}

/** Collects a repeatable option (`--blender A --blender B`). */
export function collect(v: string, previous: string[] = []): string[] {
  return [...previous, v];
}
