// Delivers webhook events from the durable outbox (WebhookStore), at least once.
//
// Each attempt POSTs the event JSON to the workspace's endpoint with these headers:
//   Content-Type: application/json
//   Renderbridge-Event: onRenderComplete
//   Renderbridge-Event-Id: <event id>       (receivers deduplicate on it)
//   Renderbridge-Delivery-Attempt: <n>      (1 on the first attempt)
//   Renderbridge-Signature: t=...,v1=...    (see shared/webhooks/signing.ts)
// A 2xx answer within the timeout is success; anything else (other status, redirect, network
// error, timeout) is retried after min(maxDelayMs, baseDelayMs * 2^(attempt-1)), reduced by up
// to `jitter` of itself at random so many receivers coming back at once are not hit in step,
// until maxAttempts attempts were made. The secret is never logged, and URLs only by origin
// (their paths or queries may hold tokens).
import { signWebhook, SIGNATURE_HEADER } from '../../shared/webhooks/signing.js';
import type { WebhookDelivery, WebhookEvent, WebhookStore } from './ports.js';

/** The subset of a pino logger the dispatcher uses. */
export interface DispatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface DispatcherOptions {
  store: WebhookStore;
  /** Pause between polls of the outbox when it has nothing due. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Per-request timeout (connect, answer and body). Default 10 000 ms. */
  timeoutMs?: number;
  /** Attempts before a delivery is marked failed. Default 10 (about 3 hours of retries with the default delays). */
  maxAttempts?: number;
  /** Delay after the first failed attempt; doubles after each further one. Default 30 000 ms. */
  baseDelayMs?: number;
  /** Upper bound of a retry delay. Default 3 600 000 ms (1 hour). */
  maxDelayMs?: number;
  /** Fraction (0..1) of each delay removed at random. Default 0.2. */
  jitter?: number;
  /** Deliveries leased per poll and sent concurrently. Default 8. */
  batchSize?: number;
  /** Sent as User-Agent. Default 'renderbridge-webhooks'. */
  userAgent?: string;
  logger?: DispatcherLogger;
  /** Injected for tests. Defaults: global fetch, Date.now, Math.random. */
  fetch?: typeof fetch;
  now?: () => number;
  random?: () => number;
}

export const DISPATCHER_DEFAULTS = {
  pollIntervalMs: 1000,
  timeoutMs: 10_000,
  maxAttempts: 10,
  baseDelayMs: 30_000,
  maxDelayMs: 3_600_000,
  jitter: 0.2,
  batchSize: 8,
  userAgent: 'renderbridge-webhooks',
} as const;

/** Deterministic per job: recording the completion twice (a retried finalize) yields one delivery. */
export function renderCompleteEventId(jobId: string): string {
  return `evt_onRenderComplete_${jobId}`;
}

/**
 * Records an onRenderComplete event for a job that just reached `completed`, when its workspace
 * has a webhook. Returns the event, or undefined when no webhook is set. Safe to call twice.
 */
export async function enqueueRenderComplete(
  store: WebhookStore,
  job: { id: string; workspaceId: string; status: string },
  now: number = Date.now(),
): Promise<WebhookEvent | undefined> {
  if (!(await store.getWebhook(job.workspaceId))) return undefined;
  const event: WebhookEvent = {
    id: renderCompleteEventId(job.id),
    event: 'onRenderComplete',
    jobId: job.id,
    workspaceId: job.workspaceId,
    status: job.status,
    occurredAt: new Date(now).toISOString(),
  };
  await store.enqueue(event, now);
  return event;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}

type ResolvedOptions = Required<Omit<DispatcherOptions, 'logger'>> & { logger: DispatcherLogger | undefined };

/** "fetch failed" alone says nothing: add the cause (ECONNREFUSED, ENOTFOUND, ...). */
function describeFetchError(err: unknown, timeoutMs: number): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
  const cause = err.cause as { code?: string; message?: string } | undefined;
  return cause ? `${err.message}: ${cause.code ?? cause.message ?? 'unknown cause'}` : err.message;
}

export class WebhookDispatcher {
  private readonly o: ResolvedOptions;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(opts: DispatcherOptions) {
    this.o = {
      ...DISPATCHER_DEFAULTS,
      fetch: (input: Parameters<typeof fetch>[0], init?: RequestInit) => globalThis.fetch(input, init),
      now: Date.now,
      random: Math.random,
      ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
      store: opts.store,
      logger: opts.logger,
    } as ResolvedOptions;
  }

  /** Starts polling; call stop() before closing the store. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      while (this.running) {
        let attempted = 0;
        this.current = this.tick().then(
          (n) => void (attempted = n),
          (err: unknown) =>
            this.o.logger?.warn(
              { err: err instanceof Error ? err.message : String(err) },
              'webhook outbox poll failed',
            ),
        );
        await this.current;
        // A full batch suggests more are due: poll again at once.
        if (!this.running || attempted >= this.o.batchSize) continue;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.timer = setTimeout(resolve, this.o.pollIntervalMs);
        });
      }
    };
    this.loop = loop();
  }

  /** Stops polling and waits for attempts in flight (each bounded by timeoutMs) to be recorded. Idempotent. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  /** One pass: leases the due deliveries and attempts each once. Returns how many were attempted. */
  async tick(): Promise<number> {
    const now = this.o.now();
    // The lease outlives the request, so a crash mid-attempt is retried, but not sooner.
    const due = await this.o.store.claimDue(now, this.o.batchSize, this.o.timeoutMs * 2 + 5000);
    await Promise.all(due.map((d) => this.attempt(d)));
    return due.length;
  }

  /** Delay before attempt `attempts + 1`, after `attempts` failures. */
  retryDelay(attempts: number): number {
    const raw = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** Math.max(0, attempts - 1));
    return Math.round(raw * (1 - this.o.jitter * this.o.random()));
  }

  private async attempt(d: WebhookDelivery): Promise<void> {
    const { store, logger } = this.o;
    const endpoint = await store.getWebhook(d.workspaceId);
    if (!endpoint) {
      await store.markFailed(d.id, d.attempts, {
        status: null,
        error: 'the workspace has no webhook any more',
        nextAttemptAt: null,
      });
      logger?.warn({ deliveryId: d.id, jobId: d.jobId }, 'webhook delivery dropped: no webhook set');
      return;
    }
    const body = JSON.stringify(d.event);
    let status: number | null = null;
    let error: string | undefined;
    try {
      const res = await this.o.fetch(endpoint.url, {
        method: 'POST',
        redirect: 'manual', // a redirect could carry the signed body somewhere unintended
        signal: AbortSignal.timeout(this.o.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': this.o.userAgent,
          'renderbridge-event': d.event.event,
          'renderbridge-event-id': d.id,
          'renderbridge-delivery-attempt': String(d.attempts),
          [SIGNATURE_HEADER.toLowerCase()]: signWebhook(endpoint.secret, body, Math.floor(this.o.now() / 1000)),
        },
        body,
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined); // the answer's body is not used
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (err) {
      error = describeFetchError(err, this.o.timeoutMs);
    }
    const log = { deliveryId: d.id, jobId: d.jobId, attempt: d.attempts, origin: originOf(endpoint.url), status };
    if (error === undefined) {
      await store.markDelivered(d.id, d.attempts, { status: status!, at: this.o.now() });
      logger?.info(log, 'webhook delivered');
      return;
    }
    const last = d.attempts >= this.o.maxAttempts;
    const nextAttemptAt = last ? null : this.o.now() + this.retryDelay(d.attempts);
    await store.markFailed(d.id, d.attempts, { status, error, nextAttemptAt });
    logger?.warn(
      { ...log, error, nextAttemptAt },
      last ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry',
    );
  }
}
