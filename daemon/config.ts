// The daemon's settings, resolved by the one rule of user-config/: flags (applied by the caller as
// overrides) > environment variables > the active profile of config.toml > defaults. State
// lives in the platform's state folder ($XDG_STATE_HOME/renderbridge on Linux, as before).
import { loadConfigFile } from '../user-config/file.js';
import { locateUserFiles } from '../user-config/locate.js';
import { resolveConfig, type ResolvedConfig } from '../user-config/resolve.js';
import type { SettingName, SettingValues } from '../user-config/settings.js';
import { join } from 'node:path';

/**
 * The daemon's settings: the person's settings it uses (their doc comments say defaults and variables; serviceUrl
 * follows edits of config.toml) and its own.
 */
export interface DaemonConfig extends Pick<
  SettingValues,
  'serviceUrl' | 'downloadsDir' | 'hotFolder' | 'blender' | 'outputFormat' | 'video' | 'overrides' | 'reconnectPatience'
> {
  /**
   * Profile of config.toml in use (its keychain entry holds the API key). Default `default`. Env RENDERBRIDGE_PROFILE.
   * Follows edits of config.toml.
   */
  profile: string;
  /** config.toml the daemon follows for edits; null: none (settings from the environment and overrides only). */
  configFile: string | null;
  /** Port on 127.0.0.1. Default 47615; 0 picks a free one. Env RENDERBRIDGE_DAEMON_PORT. */
  port: number;
  /**
   * Folder of the state file (port and token). Default: the platform's state folder
   * (`$XDG_STATE_HOME/renderbridge` on Linux).
   */
  stateDir: string;
  /** Where packed zips wait for upload; removed after a submission ends. Default `<stateDir>/packs`. */
  workDir: string;
  /**
   * Shared secret of the service's onRenderComplete webhooks; null turns the receiver off. Env
   * RENDERBRIDGE_WEBHOOK_SECRET.
   */
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
export function defaultDaemonConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<DaemonConfig> = {},
  user?: ResolvedConfig,
): DaemonConfig {
  const where = locateUserFiles(env);
  const r =
    user ??
    resolveConfig({
      config: { path: where.configFile, exists: false, data: {} },
      env,
      home: where.home,
      allowMissingProfile: true,
    });
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
    reconnectPatience: s.reconnectPatience.value,
    webhookSecret: env.RENDERBRIDGE_WEBHOOK_SECRET || null,
    pollActiveMs: 1000,
    pollIdleMs: 15_000,
    ...overrides,
  };
}

/** Reads config.toml of this user and resolves it with `flags` (by setting) and --profile. */
export function loadDaemonConfig(
  env: NodeJS.ProcessEnv,
  flags: Partial<Record<SettingName, unknown>>,
  profileFlag?: string,
  overrides: Partial<DaemonConfig> = {},
): DaemonConfig {
  const where = locateUserFiles(env);
  const user = resolveConfig({
    config: loadConfigFile(where.configFile),
    env,
    home: where.home,
    flags,
    ...(profileFlag ? { profileFlag } : {}),
  });
  return defaultDaemonConfig(env, overrides, user);
}
