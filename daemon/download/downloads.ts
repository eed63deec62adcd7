// The daemon's downloads: one run of downloadJobOutputs per job at a time, its state kept in
// memory and published as `download` events.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { DownloadState } from '../../shared/daemon/job-schemas.js';
import { downloadJobOutputs, type DownloadJobOptions } from './job.js';
import { errorBodyOf } from './errors.js';
import { DaemonError } from '../errors.js';
import type { ClientProvider, Downloads, EventSink } from '../ports.js';

export interface DownloadsDeps {
  clients: ClientProvider;
  events: EventSink;
  /** Files fetched at the same time per job. Default 4. */
  concurrency?: number;
  /**
   * Parent of the default output folder `<downloadsDir>/job-<first 8 characters of the id>`, used
   * when start() gets no outDir and the job was never downloaded before. Default none: outDir is
   * then required. A function is read at each start (the daemon's follows config.toml).
   */
  downloadsDir?: string | (() => string);
  /** Passed to every downloadJobOutputs run (retries, zips, progress interval). Default none. */
  options?: Omit<DownloadJobOptions, 'concurrency' | 'onProgress' | 'signal'>;
}

interface Entry {
  state: DownloadState;
  done: Promise<DownloadState>;
}

export function createDownloads(deps: DownloadsDeps): Downloads {
  const entries = new Map<string, Entry>();

  const publish = (state: DownloadState): void => {
    deps.events.publish({ event: 'download', data: { ...state } });
  };

  const run = async (entry: { state: DownloadState }): Promise<DownloadState> => {
    const { jobId, outDir } = entry.state;
    try {
      const client = await deps.clients.client();
      const report = await downloadJobOutputs(client, jobId, outDir, {
        ...deps.options,
        concurrency: deps.concurrency ?? 4,
        onProgress: (state) => {
          entry.state = state;
          publish(state);
        },
      });
      entry.state = report.state;
    } catch (err) {
      entry.state = { ...entry.state, state: 'failed', error: errorBodyOf(err) };
      publish(entry.state);
    }
    return entry.state;
  };

  return {
    start(jobId, outDir) {
      const previous = entries.get(jobId);
      // One run per job: a second start while it runs answers the run in progress.
      if (previous && (previous.state.state === 'pending' || previous.state.state === 'downloading'))
        return { ...previous.state };
      const parent = typeof deps.downloadsDir === 'function' ? deps.downloadsDir() : deps.downloadsDir;
      const dir =
        outDir ?? previous?.state.outDir ?? (parent ? path.join(parent, `job-${jobId.slice(0, 8)}`) : undefined);
      if (!dir)
        throw new DaemonError(
          'DAEMON_BAD_REQUEST',
          'Give the folder to download into (outDir): no downloads folder is configured.',
        );
      // Made now, not when the first file arrives: the tray's notification offers to open it.
      // A folder that cannot be made is reported by the run itself.
      try {
        mkdirSync(path.resolve(dir), { recursive: true });
      } catch {
        /* see run() */
      }
      const holder = {
        state: {
          jobId,
          outDir: path.resolve(dir),
          state: 'pending',
          files: 0,
          filesDone: 0,
          bytes: 0,
          bytesDone: 0,
          skipped: 0,
          refused: [],
          error: null,
        } satisfies DownloadState as DownloadState,
      };
      publish(holder.state);
      const entry: Entry = Object.assign(holder, { done: run(holder) });
      entries.set(jobId, entry);
      return { ...entry.state };
    },
    get(jobId) {
      const entry = entries.get(jobId);
      return entry ? { ...entry.state } : undefined;
    },
    async settled(jobId) {
      const entry = entries.get(jobId);
      if (!entry)
        throw new DaemonError(
          'DAEMON_NOT_FOUND',
          `No download of job ${jobId}: start one with POST /jobs/${jobId}/download.`,
        );
      return { ...(await entry.done) };
    },
  };
}
