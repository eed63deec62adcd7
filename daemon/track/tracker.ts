// Tracks the jobs of the API key's workspace by polling the service through the shared client:
// every `pollActiveMs` while a job is active (validating, booting, rendering, ...), every
// `pollIdleMs` otherwise, with exponential back-off after errors and the service's Retry-After
// after a 429. A poll reads the first page of GET /jobs (newest first; the first poll reads
// `initialPages`), GET /jobs/progress (counters of every active job), and GET /jobs/{id} for
// unfinished jobs that were not on that page. It publishes `job` when a job's status or counters
// change, `progress` when counters change, and `renderComplete` once per job that finishes after
// the first poll; a completed job with an outDir (setOutDir) starts downloading first.
import type { Job } from '../../shared/api/job.js';
import type { JobProgress } from '../../shared/api/progress.js';
import { ApiError } from '../../shared/client/errors.js';
import { type RenderJobClient } from '../../shared/client/client.js';
import type { TrackedJob } from '../../shared/daemon/job-schemas.js';
import { ACTIVE_STATUSES, isTerminal } from '../../shared/job-status.js';
import { DaemonError } from '../errors.js';
import type { ClientProvider, Downloads, EventSink, Tracker } from '../ports.js';
import { pollDelay } from './poll-delay.js';

export interface JobTrackerOptions {
  /**
   * Clients of the configured service; use one whose client does not retry (maxRetries 0) so 429s reach the tracker.
   */
  clients: ClientProvider;
  events: EventSink;
  /** Starts downloads of completed jobs that have an outDir. Default: none (nothing is downloaded). */
  downloads?: Downloads;
  /** Poll interval while any job is active (config.pollActiveMs, default 1000 ms). */
  pollActiveMs: number;
  /** Poll interval while none is (config.pollIdleMs, default 15000 ms). */
  pollIdleMs: number;
  /** Longest pause after consecutive errors. Default 60000 ms. */
  maxBackoffMs?: number;
  /** Page size of GET /jobs. Default 100 (the service's maximum). */
  pageSize?: number;
  /** Pages of recent jobs read by the first poll. Default 3. */
  initialPages?: number;
  /** Finished jobs kept beyond this many tracked jobs are forgotten, oldest first. Default 500. */
  maxTrackedJobs?: number;
  /** Default: none. */
  logger?: TrackerLogger;
  /** Told of each wait between polls as it begins, with its length (tests, diagnostics). Default: none. */
  onPause?: (ms: number, kickable: boolean) => void;
}

export interface TrackerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

interface Entry {
  job: Job;
  progress: JobProgress | null;
  /** renderComplete was published, or the job was already finished at the first poll. */
  finished: boolean;
}

export class JobTracker implements Tracker {
  private readonly jobs = new Map<string, Entry>();
  private readonly outDirs = new Map<string, string | null>();
  private readonly opts: Required<Omit<JobTrackerOptions, 'downloads' | 'logger' | 'onPause'>> &
    Pick<JobTrackerOptions, 'downloads' | 'logger' | 'onPause'>;
  private controller = new AbortController();
  private loop: Promise<void> | undefined;
  private running = false;
  private baselineDone = false;
  private lastClient: RenderJobClient | undefined;
  private failures = 0;
  private kicked = false;
  private wake: (() => void) | undefined;
  private pollCount = 0;
  private kickCount = 0;
  private waitingForKey = false;
  private pauseKickable = false;

  constructor(options: JobTrackerOptions) {
    this.opts = { maxBackoffMs: 60_000, pageSize: 100, initialPages: 3, maxTrackedJobs: 500, ...options };
  }

  /** Polls completed since start (tests and diagnostics). */
  get polls(): number {
    return this.pollCount;
  }

  /** Calls of kick() since the tracker was made: each asks for a poll now (tests and diagnostics). */
  get kicks(): number {
    return this.kickCount;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.controller = new AbortController();
    this.loop = this.run();
  }

  /**
   * Stops polling. A poll in flight may finish (up to `stopGraceMs`, default 2000 ms) so its
   * connections end cleanly; after that its requests are aborted. Resolves once the loop has ended.
   */
  async stop(stopGraceMs = 2000): Promise<void> {
    this.running = false;
    this.wake?.();
    if (!this.loop) return;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.loop.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), stopGraceMs))),
    ]);
    clearTimeout(timer);
    if (!finished) this.controller.abort(new Error('tracker stopped'));
    await this.loop;
  }

  list(): TrackedJob[] {
    return [...this.jobs.values()]
      .sort((a, b) => b.job.createdAt.localeCompare(a.job.createdAt))
      .map((e) => this.tracked(e));
  }

  async get(jobId: string): Promise<TrackedJob> {
    const client = await this.opts.clients.client();
    const job = await client.getJob(jobId);
    const progress = await client.getJobProgress(jobId);
    return this.tracked(await this.update(client, job, progress));
  }

  async cancel(jobId: string): Promise<TrackedJob> {
    const client = await this.opts.clients.client();
    const job = await client.cancelJob(jobId);
    return this.tracked(await this.update(client, job, undefined));
  }

  kick(): void {
    this.kickCount++;
    this.kicked = true;
    if (this.pauseKickable) this.wake?.();
  }

  setOutDir(jobId: string, outDir: string | null): void {
    this.outDirs.set(jobId, outDir);
    // Finished already, unseen by the download: start it now.
    const entry = this.jobs.get(jobId);
    if (outDir && entry?.finished && entry.job.status === 'completed') this.startDownload(jobId, outDir);
  }

  private tracked(e: Entry): TrackedJob {
    return { job: e.job, progress: e.progress, download: this.opts.downloads?.get(e.job.id) ?? null };
  }

  private anyActive(): boolean {
    for (const e of this.jobs.values()) if (ACTIVE_STATUSES.has(e.job.status)) return true;
    return false;
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.kicked = false;
      let delay: { ms: number; kickable: boolean };
      try {
        await this.pollOnce();
        this.failures = 0;
        this.waitingForKey = false;
        delay = { ms: this.anyActive() ? this.opts.pollActiveMs : this.opts.pollIdleMs, kickable: true };
      } catch (err) {
        if (!this.running) break;
        const noKey = err instanceof DaemonError && err.code === 'NO_API_KEY';
        if (noKey && !this.waitingForKey)
          this.opts.logger?.info({}, 'no API key configured: the tracker waits for one');
        this.waitingForKey = noKey;
        if (!noKey) this.failures++;
        delay = pollDelay(err, this.failures, this.opts, this.opts.logger);
      }
      if (!this.running) break;
      if (this.kicked && delay.kickable) continue;
      await this.pause(delay.ms, delay.kickable);
    }
  }

  /** Waits `ms`; a kick() ends a kickable wait early (never a Retry-After one), stop() any wait. */
  private async pause(ms: number, kickable: boolean): Promise<void> {
    this.pauseKickable = kickable;
    this.opts.onPause?.(ms, kickable);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
    this.pauseKickable = false;
  }

  private async pollOnce(): Promise<void> {
    const client = await this.opts.clients.client();
    if (client !== this.lastClient) {
      // Another key may mean another workspace: start over without announcing its history.
      this.jobs.clear();
      this.baselineDone = false;
      this.lastClient = client;
    }
    const signal = this.controller.signal;
    const seen = new Map<string, Job>();
    const pages = this.baselineDone ? 1 : this.opts.initialPages;
    for (let page = 1; page <= pages; page++) {
      const { jobs, pagination } = await client.listJobs({ page, pageSize: this.opts.pageSize }, { signal });
      for (const j of jobs) seen.set(j.id, j);
      if (jobs.length === 0 || page >= pagination.totalPages) break;
    }
    const progress = new Map((await client.listProgress({ signal })).map((p) => [p.jobId, p]));
    const missing = new Set<string>(progress.keys());
    for (const [id, e] of this.jobs) if (!isTerminal(e.job.status)) missing.add(id);
    for (const id of missing) {
      if (seen.has(id)) continue;
      try {
        seen.set(id, await client.getJob(id, { signal }));
      } catch (err) {
        // Gone (deleted, or no longer visible to this key): stop tracking it.
        if (err instanceof ApiError && err.status === 404) this.jobs.delete(id);
        else throw err;
      }
    }
    for (const job of seen.values()) await this.update(client, job, progress.get(job.id));
    this.baselineDone = true;
    this.prune();
    this.pollCount++;
  }

  /** Records what the service said about a job and publishes what changed. */
  private async update(client: RenderJobClient, job: Job, progress: JobProgress | undefined): Promise<Entry> {
    const prev = this.jobs.get(job.id);
    const entry: Entry = { job, progress: progress ?? prev?.progress ?? null, finished: prev?.finished ?? false };
    this.jobs.set(job.id, entry);
    if (!this.baselineDone) {
      // The first poll learns the workspace's history; only what finishes later is news.
      if (isTerminal(job.status)) entry.finished = true;
      return entry;
    }
    const finishing = isTerminal(job.status) && !entry.finished;
    if (finishing) {
      entry.finished = true;
      // The final counters (the job has left GET /jobs/progress).
      entry.progress = await client
        .getJobProgress(job.id, { signal: this.controller.signal })
        .catch(() => entry.progress);
    }
    const jobChanged = !prev || prev.job.status !== job.status || prev.job.updatedAt !== job.updatedAt;
    const progressChanged =
      entry.progress !== null && JSON.stringify(entry.progress) !== JSON.stringify(prev?.progress ?? null);
    if (progressChanged && entry.progress) this.opts.events.publish({ event: 'progress', data: entry.progress });
    if (jobChanged || progressChanged) this.opts.events.publish({ event: 'job', data: this.tracked(entry) });
    if (finishing) {
      const status = job.status as 'completed' | 'failed' | 'canceled';
      const wanted = this.outDirs.get(job.id) ?? null;
      const outDir = status === 'completed' && wanted ? this.startDownload(job.id, wanted) : null;
      this.opts.events.publish({ event: 'renderComplete', data: { jobId: job.id, status, job, outDir } });
    }
    return entry;
  }

  /** Starts the download; returns the folder it goes to, or null when it could not start. */
  private startDownload(jobId: string, outDir: string): string | null {
    if (!this.opts.downloads) return null;
    try {
      return this.opts.downloads.start(jobId, outDir).outDir;
    } catch (err) {
      this.opts.logger?.warn(
        { jobId, err: err instanceof Error ? err.message : String(err) },
        'the download could not start',
      );
      return null;
    }
  }

  private prune(): void {
    const excess = this.jobs.size - this.opts.maxTrackedJobs;
    if (excess <= 0) return;
    const finished = [...this.jobs.values()]
      .filter((e) => isTerminal(e.job.status))
      .sort((a, b) => a.job.createdAt.localeCompare(b.job.createdAt));
    for (const e of finished.slice(0, excess)) {
      this.jobs.delete(e.job.id);
      this.outDirs.delete(e.job.id);
    }
  }
}
