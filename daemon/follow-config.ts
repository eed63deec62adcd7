// Follows edits of config.toml while the daemon runs. Every setting of the file applies without a
// restart: the config object is updated in place and everything reads it per use (service URL
// and profile at the next request, downloadsDir at the next download, blender at the next trace,
// the submission defaults at the next submission), and onChange re-wires what holds a resource
// (the hot folder is re-watched). Only the port needs a restart: the daemon listens on it and the
// add-on and tray found it in the state file. A broken edit is logged with its reason and the
// last good config is kept.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { watch, type FSWatcher } from 'chokidar';
import type { DaemonConfig } from './config.js';

export interface FollowLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The settings applied while the daemon runs. */
export const LIVE_SETTINGS = [
  'serviceUrl',
  'profile',
  'downloadsDir',
  'hotFolder',
  'blender',
  'outputFormat',
  'video',
  'overrides',
] as const;
export type LiveSetting = (typeof LIVE_SETTINGS)[number];
const AT_START = ['port'] as const;

export interface FollowConfigOptions {
  /** Re-reads the file and resolves it with the daemon's flags and environment; throws on a bad edit. */
  reload: () => DaemonConfig;
  logger: FollowLogger;
  /**
   * Called after a change applied, with the settings that changed (e.g. to read the new profile's
   * key, to re-watch the hot folder).
   */
  onChange?: (changed: LiveSetting[]) => void;
}

export async function followConfigFile(config: DaemonConfig, options: FollowConfigOptions): Promise<FSWatcher | null> {
  if (!config.configFile) return null;
  const file = config.configFile;
  // The folder is watched, not the file: an atomic save replaces the file, and it may not exist yet.
  await mkdir(path.dirname(file), { recursive: true });
  const watcher = watch(path.dirname(file), {
    ignoreInitial: true,
    depth: 0,
    awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 50 },
  });
  const apply = (changed: string): void => {
    if (path.resolve(changed) !== path.resolve(file)) return;
    let next: DaemonConfig;
    try {
      next = options.reload();
    } catch (err) {
      options.logger.warn(
        { file, reason: (err as Error).message },
        'config.toml edit not applied: keeping the last good config',
      );
      return;
    }
    const changes = LIVE_SETTINGS.filter((k) => !isDeepStrictEqual(next[k], config[k]));
    const applied = Object.fromEntries(changes.map((k) => [k, next[k]]));
    Object.assign(config, applied);
    const restart = AT_START.filter((k) => next[k] !== config[k]);
    if (changes.length)
      options.logger.info(
        { file, serviceUrl: config.serviceUrl, profile: config.profile, applied },
        'config.toml changed: applied',
      );
    if (restart.length)
      options.logger.warn(
        { file, settings: restart },
        'config.toml changed settings that apply at the next start of the daemon (the port: the add-on and ' +
          'the tray find the daemon by it)',
      );
    if (changes.length) options.onChange?.(changes);
  };
  watcher.on('add', apply).on('change', apply).on('unlink', apply);
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  options.logger.info(
    { file, live: LIVE_SETTINGS, atNextStart: AT_START },
    'following config.toml: edits apply now, the port at the next start',
  );
  return watcher;
}
