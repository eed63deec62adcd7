// The daemon with every real part: packer (with headless-Blender tracing), submissions, downloads
// and, when configured, the hot folder. `renderbridge daemon` runs this; tests start it the same way.
import type { DaemonConfig } from './config.js';
import { createDownloads } from './download/downloads.js';
import { watchHotFolder, type HotFolder } from './submit/hot-folder.js';
import { createPacker } from './pack/packer.js';
import { startDaemon, type RunningDaemon, type StartDaemonOptions } from './server.js';
import { createSubmissions } from './submit/submissions.js';
import { createTracer } from './trace.js';

export type BridgeDaemonOptions = Omit<StartDaemonOptions, 'createPacker' | 'createDownloads' | 'createSubmissions'>;

export interface RunningBridgeDaemon extends RunningDaemon {
  /** The watched folder, when config.hotFolder is set. */
  hotFolder: HotFolder | null;
}

export async function startBridgeDaemon(config: DaemonConfig, options: BridgeDaemonOptions = {}): Promise<RunningBridgeDaemon> {
  const createdBy = `renderbridge-daemon/${options.version ?? 'dev'}`;
  let submissionsOf: ReturnType<typeof createSubmissions> | undefined;
  const daemon = await startDaemon(config, {
    ...options,
    createPacker: () => createPacker({ workDir: config.workDir, trace: createTracer({ blender: config.blender }), createdBy }),
    createDownloads: (ctx) => createDownloads({ clients: ctx.clients, events: ctx.events, downloadsDir: config.downloadsDir }),
    createSubmissions: (ctx) =>
      (submissionsOf = createSubmissions({
        clients: ctx.clients,
        packer: ctx.packer,
        events: ctx.events,
        tracker: ctx.tracker,
        downloads: ctx.downloads,
        downloadsDir: config.downloadsDir,
        pollMs: config.pollActiveMs,
      })),
  });
  let hotFolder: HotFolder | null = null;
  if (config.hotFolder && submissionsOf) {
    try {
      hotFolder = await watchHotFolder(config.hotFolder, { submissions: submissionsOf, log: daemon.app.log });
    } catch (err) {
      await daemon.close();
      throw err;
    }
  }
  const close = daemon.close;
  return {
    ...daemon,
    hotFolder,
    close: async () => {
      await hotFolder?.close();
      await close();
    },
  };
}
