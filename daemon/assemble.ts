// The daemon with every real part: packer (with headless-Blender tracing), submissions, downloads
// and, when configured, the hot folder. `renderbridge daemon` runs this; tests start it the same way.
// The parts read the config per use (Blender at each trace, the downloads folder at each download,
// the profile's defaults at each submission), so edits of config.toml apply without a restart; a
// new hot folder is watched in place of the old one.
import path from 'node:path';
import type { DaemonConfig } from './config.js';
import { createDownloads } from './download/downloads.js';
import { watchHotFolder, type HotFolder } from './submit/hot-folder.js';
import { HASH_CACHE_FILE, HashCache } from './pack/hash-cache.js';
import { createPacker } from './pack/packer.js';
import { startDaemon, type RunningDaemon, type StartDaemonOptions } from './server.js';
import { submitDefaultsOf } from './submit/defaults.js';
import { createSubmissions } from './submit/submissions.js';
import { createTracer } from './trace.js';
import type { Submissions } from './ports.js';

export type BridgeDaemonOptions = Omit<
  StartDaemonOptions,
  'createPacker' | 'createDownloads' | 'createSubmissions' | 'onConfigChange'
>;

export interface RunningBridgeDaemon extends RunningDaemon {
  /** The watched folder, when config.hotFolder is set (replaced when config.toml names another). */
  readonly hotFolder: HotFolder | null;
}

export async function startBridgeDaemon(
  config: DaemonConfig,
  options: BridgeDaemonOptions = {},
): Promise<RunningBridgeDaemon> {
  const createdBy = `renderbridge-daemon/${options.version ?? 'dev'}`;
  let submissionsOf: Submissions | undefined;
  let hotFolder: HotFolder | null = null;
  // Re-watches run one after another, so quick edits end on the last folder named.
  let rewatching: Promise<void> = Promise.resolve();
  const daemon = await startDaemon(config, {
    ...options,
    // Checksums survive restarts in the state folder, so a resubmit reads only the files that changed.
    createPacker: () =>
      createPacker({
        workDir: config.workDir,
        trace: createTracer({ blender: () => config.blender }),
        createdBy,
        hashCache: new HashCache({ file: path.join(config.stateDir, HASH_CACHE_FILE) }),
      }),
    createDownloads: (ctx) =>
      createDownloads({ clients: ctx.clients, events: ctx.events, downloadsDir: () => config.downloadsDir }),
    createSubmissions: (ctx) =>
      (submissionsOf = createSubmissions({
        clients: ctx.clients,
        packer: ctx.packer,
        events: ctx.events,
        tracker: ctx.tracker,
        downloads: ctx.downloads,
        downloadsDir: () => config.downloadsDir,
        defaults: () => submitDefaultsOf(config),
        pollMs: config.pollActiveMs,
      })),
    onConfigChange: (changed) => {
      if (changed.includes('hotFolder')) rewatching = rewatching.then(rewatch);
    },
  });
  const watchConfigured = async (): Promise<HotFolder | null> =>
    config.hotFolder && submissionsOf
      ? watchHotFolder(config.hotFolder, { submissions: submissionsOf, log: daemon.app.log })
      : null;
  // The old folder is let go first: a file dropped there from now on is not submitted.
  const rewatch = async (): Promise<void> => {
    const old = hotFolder;
    hotFolder = null;
    await old?.close();
    try {
      hotFolder = await watchConfigured();
    } catch (err) {
      daemon.app.log.warn(
        { dir: config.hotFolder, err: String(err) },
        'hot folder: the folder config.toml names cannot be watched; none is watched',
      );
    }
  };
  try {
    hotFolder = await watchConfigured();
  } catch (err) {
    await daemon.close();
    throw err;
  }
  const close = daemon.close;
  return {
    ...daemon,
    get hotFolder() {
      return hotFolder;
    },
    close: async () => {
      await rewatching;
      await hotFolder?.close();
      await close();
    },
  };
}
