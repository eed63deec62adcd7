// The service the worker API tests run against (a farm-wide worker token, a webhook receiver that
// counts its hits) and the ways they reach it: RemoteWorkerJobs, raw calls to the worker API, the
// public API, and servers of their own (sick, hung or lossy instances) closed after the file.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RemoteWorkerJobs, type RemoteWorkerJobsOptions } from '../../../service/worker-api/remote-jobs.js';
import { JobEnvelope, type Job } from '../../../shared/api/job.js';
import type { JobProgress } from '../../../shared/api/progress.js';
import { API_KEY_PREFIX } from '../../../shared/constants.js';
import { createJob, type Call } from '../../helpers/flow.js';
import { api, type Answer } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

// Shaped like an API key, so it is the key lookup (not the shape check) that refuses it on the public API.
export const TOKEN = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

/** A URL on which nothing listens. */
export async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return `http://127.0.0.1:${port}`;
}

export function progressOf(jobId: string, over: Partial<JobProgress> = {}): JobProgress {
  return {
    jobId,
    status: 'validating',
    framesTotal: 10,
    framesDone: 3,
    framesRendering: 1,
    framesFailed: 0,
    currentFrame: 4,
    currentSample: 2,
    samplesTotal: 8,
    percent: 32.5,
    etaSeconds: 20,
    updatedAt: new Date().toISOString(),
    ...over,
  };
}

export class WorkerApiHarness {
  svc!: TestService;
  call!: Call;
  /** The file's remote job store, on the farm-wide token. */
  jobs!: RemoteWorkerJobs;
  hookHits = 0;
  private readonly servers: Server[] = [];

  async start(): Promise<void> {
    this.svc = await startTestService({ workerToken: TOKEN, rateLimitMax: 10_000 });
    this.call = api(this.svc.baseUrl, this.svc.apiKey);
    this.jobs = this.remote();
    const hook = await this.serve((req, res) => {
      this.hookHits++;
      req.resume().on('end', () => res.writeHead(200).end('ok'));
    });
    await this.svc.service.webhooks.setWebhook(this.svc.workspaceId, {
      url: `${hook}/hook`,
      secret: randomBytes(32).toString('hex'),
    });
  }

  async close(): Promise<void> {
    await this.svc?.close();
    for (const s of this.servers) s.closeAllConnections();
    await Promise.all(this.servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }

  /** A real HTTP server on a free port, closed after the file. */
  async serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const s = createServer(handler);
    this.servers.push(s);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  remote(opts: Partial<RemoteWorkerJobsOptions> = {}): RemoteWorkerJobs {
    return new RemoteWorkerJobs({ serviceUrls: [this.svc.origin], token: TOKEN, retryDelayMs: 50, ...opts });
  }

  /** A raw call to the worker API, as any HTTP client would make it. */
  async internal(
    method: string,
    route: string,
    body?: unknown,
    opts: { token?: string | null; raw?: string; origin?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    const token = opts.token === undefined ? TOKEN : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${opts.origin ?? this.svc.origin}${WORKER_API_PREFIX}${route}`, {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  async publicJob(id: string): Promise<Job> {
    const r = await this.call('GET', `/jobs/${id}`);
    expect(r.status).toBe(200);
    return JobEnvelope.parse(r.body).data;
  }

  /** A job moved by the remote store through every step to `completed`. */
  async completedJob(): Promise<string> {
    const { id } = await createJob(this.call);
    const steps: [string, string][] = [
      ['created', 'validating'],
      ['validating', 'validated'],
      ['validated', 'booting'],
      ['booting', 'rendering'],
      ['rendering', 'completed'],
    ];
    for (const [from, to] of steps)
      expect((await this.jobs.transition(id, [from as never], to as never))?.job.status).toBe(to);
    return id;
  }
}

/** The harness of a test file: its service starts before the file's tests and stops after them. */
export function workerApiHarness(): WorkerApiHarness {
  const h = new WorkerApiHarness();
  beforeAll(() => h.start());
  afterAll(() => h.close());
  return h;
}
