// What GET /events streams: each workspace's job changes (status, counters, preview), found by
// reading the job store, so a change made anywhere (this process's worker, a worker process on
// the same SQLite file, another instance on PostgreSQL, a remote worker through the worker API)
// is seen the same way, with no signal that could be lost. One reader per workspace with open
// streams, however many streams: each poll costs two indexed queries (the newest jobs and the
// running jobs' counters) plus one read per other job still unfinished.
import type { JobEvent } from '../../shared/api/dashboard.js';
import type { Job } from '../../shared/api/job.js';
import type { JobProgress } from '../../shared/api/progress.js';
import { ACTIVE_STATUSES, TERMINAL_STATUSES } from '../../shared/job-status.js';
import { presentJobJson } from '../domain/jobs.js';
import type { JobReadModel, ProgressStore, StoredJobJson } from '../ports/jobs.js';
import type { ObjectStorage } from '../ports/storage.js';

export interface JobFeedDeps {
  jobs: Pick<JobReadModel, 'listJson' | 'getJson'> & Pick<ProgressStore, 'listProgress'>;
  storage: ObjectStorage;
  /** Lifetime of the preview URLs in events, seconds (the download URL lifetime). */
  urlTtlSeconds: number;
  /** Pause between two reads of a workspace's jobs, ms: how late a change may be streamed. Default 1000. */
  pollMs?: number;
  /**
   * Newest jobs of a workspace that the feed follows (and sends when a stream opens), besides
   * every running one. Default 50.
   */
  recent?: number;
  /** Told about a failed read (the feed tries again at the next poll). Default: dropped. */
  onError?: (err: unknown, workspaceId: string) => void;
}

type Listener = (event: JobEvent) => void;

interface Known {
  fingerprint: string;
  event: JobEvent;
}

const fingerprintOf = (job: { status: string; updatedAt: string }, stored: StoredJobJson, p: JobProgress | undefined) =>
  [job.status, job.updatedAt, stored.previewKey ?? '', p?.updatedAt ?? '', p?.framesDone ?? '', p?.percent ?? ''].join(
    '|',
  );

class WorkspaceFeed {
  readonly listeners = new Set<Listener>();
  private readonly known = new Map<string, Known>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly primed: Promise<void>;

  constructor(
    private readonly workspaceId: string,
    private readonly deps: JobFeedDeps,
  ) {
    this.primed = this.poll();
  }

  /** Every job the feed knows, as events: what a new stream starts with. */
  snapshot(): JobEvent[] {
    return [...this.known.values()].map((k) => k.event);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async poll(): Promise<void> {
    try {
      await this.read();
    } catch (err) {
      this.deps.onError?.(err, this.workspaceId);
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.poll(), this.deps.pollMs ?? 1000);
  }

  private async read(): Promise<void> {
    const { jobs } = this.deps;
    const ws = this.workspaceId;
    const [page, running] = await Promise.all([
      jobs.listJson(ws, { page: 1, pageSize: this.deps.recent ?? 50 }),
      jobs.listProgress(ws, [...ACTIVE_STATUSES]),
    ]);
    const progress = new Map(running.map((p) => [p.jobId, p]));
    const stored = new Map<string, StoredJobJson>();
    for (const item of page.items) stored.set((JSON.parse(item.json) as { id: string }).id, item);
    // Running jobs older than the first page, and jobs the feed saw unfinished: read one by one.
    const others = new Set([...progress.keys()]);
    for (const [id, k] of this.known) if (!TERMINAL_STATUSES.has(k.event.job.status)) others.add(id);
    for (const id of others) {
      if (stored.has(id)) continue;
      const one = await jobs.getJson(ws, id);
      if (one) stored.set(id, one);
    }
    for (const [id, s] of stored) {
      const job = JSON.parse(s.json) as Omit<Job, 'previewUrl'>;
      const p = progress.get(id);
      const fingerprint = fingerprintOf(job, s, p);
      if (this.known.get(id)?.fingerprint === fingerprint) continue;
      const presented = JSON.parse(await presentJobJson(s, this.deps.storage, this.deps.urlTtlSeconds)) as Job;
      const event: JobEvent = { job: presented, progress: p ? { ...p, status: job.status } : null };
      this.known.set(id, { fingerprint, event });
      if (this.stopped) return;
      for (const l of this.listeners) l(event);
    }
  }
}

export class JobFeed {
  private readonly feeds = new Map<string, WorkspaceFeed>();

  constructor(private readonly deps: JobFeedDeps) {}

  /**
   * Calls `listener` with every job the workspace's feed knows, then with each change, until the
   * returned function is called. The first subscriber of a workspace starts its reads, the last
   * one to leave stops them.
   */
  async subscribe(workspaceId: string, listener: Listener): Promise<() => void> {
    let feed = this.feeds.get(workspaceId);
    if (!feed) this.feeds.set(workspaceId, (feed = new WorkspaceFeed(workspaceId, this.deps)));
    const f = feed;
    await f.primed;
    // Everyone else left while this one waited: that feed stopped, start another.
    if (this.feeds.get(workspaceId) !== f) return this.subscribe(workspaceId, listener);
    for (const e of f.snapshot()) listener(e);
    f.listeners.add(listener);
    return () => {
      f.listeners.delete(listener);
      if (f.listeners.size === 0 && this.feeds.get(workspaceId) === f) {
        f.stop();
        this.feeds.delete(workspaceId);
      }
    };
  }

  close(): void {
    for (const f of this.feeds.values()) f.stop();
    this.feeds.clear();
  }
}
