// Follows edits of config.toml while the daemon runs: the new service URL and profile apply to
// the next request (the config object is updated in place, and everything reads it per call).
// A broken edit is logged with its reason and the last good config is kept. Settings that are
// wired at start (port, folders, Blender) are reported as needing a restart.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { DaemonConfig } from './config.js';

export interface FollowLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface FollowConfigOptions {
  /** Re-reads the file and resolves it with the daemon's flags and environment; throws on a bad edit. */
  reload: () => DaemonConfig;
  logger: FollowLogger;
  /** Called after a change applied (e.g. to read the new profile's key at once). */
  onChange?: () => void;
}

const LIVE = ['serviceUrl', 'profile'] as const;
const AT_START = ['port', 'downloadsDir', 'hotFolder', 'blender'] as const;

export async function followConfigFile(config: DaemonConfig, options: FollowConfigOptions): Promise<FSWatcher | null> {
  if (!config.configFile) return null;
  const file = config.configFile;
  // The folder is watched, not the file: an atomic save replaces the file, and it may not exist yet.
  await mkdir(path.dirname(file), { recursive: true });
  const watcher = watch(path.dirname(file), { ignoreInitial: true, depth: 0, awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 50 } });
  const apply = (changed: string): void => {
    if (path.resolve(changed) !== path.resolve(file)) return;
    let next: DaemonConfig;
    try {
      next = options.reload();
    } catch (err) {
      options.logger.warn({ file, reason: (err as Error).message }, 'config.toml edit not applied: keeping the last good config');
      return;
    }
    const changes = LIVE.filter((k) => next[k] !== config[k]);
    config.serviceUrl = next.serviceUrl;
    config.profile = next.profile;
    const restart = AT_START.filter((k) => next[k] !== config[k]);
    if (changes.length) options.logger.info({ file, serviceUrl: config.serviceUrl, profile: config.profile }, 'config.toml changed: applied');
    if (restart.length) options.logger.warn({ file, settings: restart }, 'config.toml changed settings that apply at the next start of the daemon');
    if (changes.length) options.onChange?.();
  };
  watcher.on('add', apply).on('change', apply).on('unlink', apply);
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return watcher;
}
