// The daemon's settings: defaults, then the per-user config file, then environment variables,
// then command-line flags (applied by the caller). Paths follow the XDG base directories.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DAEMON_DEFAULT_PORT } from '../shared/daemon/api.js';

export interface DaemonConfig {
  /** Service API root, ending in /api/external/v1. Default `http://127.0.0.1:8420/api/external/v1` (the bundled service). Env RENDERBRIDGE_SERVICE_URL. */
  serviceUrl: string;
  /** Port on 127.0.0.1. Default 47615; 0 picks a free one. Env RENDERBRIDGE_DAEMON_PORT. */
  port: number;
  /** Folder of the state file (port and token). Default `$XDG_STATE_HOME/renderbridge` (`~/.local/state/renderbridge`). */
  stateDir: string;
  /** Where packed zips wait for upload; removed after a submission ends. Default `<stateDir>/packs`. */
  workDir: string;
  /** Parent of the per-job output folders. Default `~/renderbridge-outputs`. Env RENDERBRIDGE_DOWNLOADS. */
  downloadsDir: string;
  /** Watched folder: a .blend or .zip written there is submitted. Default none. Env RENDERBRIDGE_HOT_FOLDER. */
  hotFolder: string | null;
  /** Blender used to trace a .blend's dependencies. Default `blender` on PATH. Env RENDERBRIDGE_BLENDER. */
  blender: string;
  /** Shared secret of the service's onRenderComplete webhooks; null turns the receiver off. Env RENDERBRIDGE_WEBHOOK_SECRET. */
  webhookSecret: string | null;
  /** Poll interval while a job of the workspace is active. Default 1000 ms. */
  pollActiveMs: number;
  /** Poll interval while nothing is active. Default 15000 ms. */
  pollIdleMs: number;
}

export function xdgStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'renderbridge');
}

export function xdgConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'renderbridge');
}

export function defaultDaemonConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<DaemonConfig> = {}): DaemonConfig {
  const stateDir = overrides.stateDir ?? xdgStateDir(env);
  const port = env.RENDERBRIDGE_DAEMON_PORT ? Number(env.RENDERBRIDGE_DAEMON_PORT) : DAEMON_DEFAULT_PORT;
  return {
    serviceUrl: env.RENDERBRIDGE_SERVICE_URL || 'http://127.0.0.1:8420/api/external/v1',
    port: Number.isInteger(port) && port >= 0 && port < 65_536 ? port : DAEMON_DEFAULT_PORT,
    stateDir,
    workDir: join(stateDir, 'packs'),
    downloadsDir: env.RENDERBRIDGE_DOWNLOADS || join(homedir(), 'renderbridge-outputs'),
    hotFolder: env.RENDERBRIDGE_HOT_FOLDER || null,
    blender: env.RENDERBRIDGE_BLENDER || 'blender',
    webhookSecret: env.RENDERBRIDGE_WEBHOOK_SECRET || null,
    pollActiveMs: 1000,
    pollIdleMs: 15_000,
    ...overrides,
  };
}
