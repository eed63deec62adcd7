// The daemon's settings, resolved by the one rule of user-config/: flags (applied by the caller as
// overrides) > environment variables > the active profile of config.toml > defaults. State
// lives in the platform's state folder ($XDG_STATE_HOME/renderbridge on Linux, as before).
import { loadConfigFile } from '../user-config/file.js';
import { locateUserFiles } from '../user-config/locate.js';
import { resolveConfig, type ResolvedConfig } from '../user-config/resolve.js';
import type { SettingName } from '../user-config/settings.js';
import { join } from 'node:path';

export interface DaemonConfig {
  /** Service API root, ending in /api/external/v1. Default `http://127.0.0.1:8420/api/external/v1` (the bundled service). Env RENDERBRIDGE_SERVICE_URL. Follows edits of config.toml. */
  serviceUrl: string;
  /** Profile of config.toml in use (its keychain entry holds the API key). Default `default`. Env RENDERBRIDGE_PROFILE. Follows edits of config.toml. */
  profile: string;
  /** config.toml the daemon follows for edits; null: none (settings from the environment and overrides only). */
  configFile: string | null;
  /** Port on 127.0.0.1. Default 47615; 0 picks a free one. Env RENDERBRIDGE_DAEMON_PORT. */
  port: number;
  /** Folder of the state file (port and token). Default: the platform's state folder (`$XDG_STATE_HOME/renderbridge` on Linux). */
  stateDir: string;
  /** Where packed zips wait for upload; removed after a submission ends. Default `<stateDir>/packs`. */
  workDir: string;
  /** Parent of the per-job output folders. Default `~/renderbridge-outputs`. Env RENDERBRIDGE_DOWNLOADS. */
  downloadsDir: string;
  /** Watched folder: a .blend or .zip written there is submitted. Default none. Env RENDERBRIDGE_HOT_FOLDER. */
  hotFolder: string | null;
  /** Blender used to trace a .blend's dependencies. Default `blender` on PATH. Env RENDERBRIDGE_BLENDER. */
  blender: string;
  /** Output format of a submission that names none (e.g. PNG). Default none: the file's. Env RENDERBRIDGE_OUTPUT_FORMAT. */
  outputFormat: string | null;
  /** Whether a submission that does not say also makes a video. Default none: the service's. Env RENDERBRIDGE_VIDEO. */
  video: boolean | null;
  /** requestedRenderConfig fields of every submission, under what the submission itself sets. Default none. */
  overrides: Record<string, unknown>;
  /** Shared secret of the service's onRenderComplete webhooks; null turns the receiver off. Env RENDERBRIDGE_WEBHOOK_SECRET. */
  webhookSecret: string | null;
  /** Poll interval while a job of the workspace is active. Default 1000 ms. */
  pollActiveMs: number;
  /** Poll interval while nothing is active. Default 15000 ms. */
  pollIdleMs: number;
}

/**
 * The config from `user` (resolved settings, file included), or when none is given from the
 * environment alone (no file is read: tests and embedders stay independent of the user's
 * files). A bad value throws a ConfigError naming the setting and its source.
 */
export function defaultDaemonConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<DaemonConfig> = {}, user?: ResolvedConfig): DaemonConfig {
  const where = locateUserFiles(env);
  const r = user ?? resolveConfig({ config: { path: where.configFile, exists: false, data: {} }, env, home: where.home, allowMissingProfile: true });
  const s = r.settings;
  const stateDir = overrides.stateDir ?? where.dirs.state;
  return {
    serviceUrl: s.serviceUrl.value,
    profile: r.profile.value,
    configFile: user ? user.file.path : null,
    port: s.daemonPort.value,
    stateDir,
    workDir: join(stateDir, 'packs'),
    downloadsDir: s.downloadsDir.value,
    hotFolder: s.hotFolder.value,
    blender: s.blender.value,
    outputFormat: s.outputFormat.value,
    video: s.video.value,
    overrides: s.overrides.value,
    webhookSecret: env.RENDERBRIDGE_WEBHOOK_SECRET || null,
    pollActiveMs: 1000,
    pollIdleMs: 15_000,
    ...overrides,
  };
}

/** Reads config.toml of this user and resolves it with `flags` (by setting) and --profile. */
export function loadDaemonConfig(env: NodeJS.ProcessEnv, flags: Partial<Record<SettingName, unknown>>, profileFlag?: string, overrides: Partial<DaemonConfig> = {}): DaemonConfig {
  const where = locateUserFiles(env);
  const user = resolveConfig({ config: loadConfigFile(where.configFile), env, home: where.home, flags, ...(profileFlag ? { profileFlag } : {}) });
  return defaultDaemonConfig(env, overrides, user);
}
