// Webhook state: one endpoint per workspace and a durable outbox of deliveries. The dispatcher
// (delivery.ts) depends on this interface only; the SQLite adapter is the embedded default.

/** The only documented event. */
export type WebhookEventName = 'onRenderComplete';

/** The JSON body POSTed to the endpoint; identical on every attempt of one event. */
export interface WebhookEvent {
  /** Event id: receivers deduplicate on it (delivery is at-least-once). */
  id: string;
  event: WebhookEventName;
  jobId: string;
  workspaceId: string;
  status: string;
  occurredAt: string;
}

export interface WebhookEndpoint {
  workspaceId: string;
  url: string;
  /** HMAC key of the signatures (see shared/webhooks/signing.ts). Never log it. */
  secret: string;
  createdAt: string;
  updatedAt: string;
}

/** pending: will be (re)tried at nextAttemptAt; delivered: a 2xx came back; failed: gave up. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  /** The event id: one delivery per event. */
  id: string;
  workspaceId: string;
  jobId: string;
  event: WebhookEvent;
  state: DeliveryState;
  /** Attempts started so far, counting one in flight. */
  attempts: number;
  /** Epoch ms of the next attempt (or of the lease's end while one runs); null once final. */
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface WebhookStore {
  /** The id of the workspace with this name (admin commands name workspaces). */
  workspaceId(name: string): Promise<string | undefined>;
  /** Sets (or replaces) the workspace's endpoint. */
  setWebhook(workspaceId: string, endpoint: { url: string; secret: string }): Promise<void>;
  getWebhook(workspaceId: string): Promise<WebhookEndpoint | undefined>;
  /** Returns false when the workspace had none. Pending deliveries give up at their next attempt. */
  removeWebhook(workspaceId: string): Promise<boolean>;
  /** Adds a pending delivery due at `dueAt` (epoch ms). Idempotent per event id: false when it already existed. */
  enqueue(event: WebhookEvent, dueAt: number): Promise<boolean>;
  /**
   * Leases up to `limit` pending deliveries due at `now`: each gets attempts + 1 and is hidden
   * until `now + leaseMs`, so a dispatcher that dies mid-attempt lets another retry it.
   */
  claimDue(now: number, limit: number, leaseMs: number): Promise<WebhookDelivery[]>;
  /** Records success of the attempt numbered `attempt`; ignored when another attempt took over. */
  markDelivered(id: string, attempt: number, result: { status: number; at: number }): Promise<void>;
  /** Records a failed attempt: retried at `nextAttemptAt`, or final when it is null. */
  markFailed(
    id: string,
    attempt: number,
    result: { status: number | null; error: string; nextAttemptAt: number | null },
  ): Promise<void>;
  getDelivery(id: string): Promise<WebhookDelivery | undefined>;
  /** Oldest first. */
  listForJob(jobId: string): Promise<WebhookDelivery[]>;
}
