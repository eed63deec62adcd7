// Authentication of the internal worker API: a per-worker token (renderbridge admin
// create-worker-token), looked up on every call so a revoke takes effect at the next one; or the
// deprecated farm-wide RENDERBRIDGE_WORKER_TOKEN. API keys never work here.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.js';
import { applyDecision } from '../http/rate-limit.js';
import { hashWorkerToken } from '../domain/worker-tokens.js';
import type { RateLimiter } from '../ports/rate-limit.js';
import type { WorkerTokenAuth } from '../ports/worker-tokens.js';

/** Who is calling: a named worker (scoped to its own leases), or the farm-wide legacy token. */
export interface WorkerIdentity {
  /** The token's worker name; null for the deprecated farm-wide token, which is not scoped. */
  name: string | null;
  /** The rate-limit bucket: the token's id, or `legacy`. */
  bucket: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the worker API's authentication (routes under /internal/worker/v1 only). */
    worker?: WorkerIdentity;
  }
}

const UNAUTHORIZED_MESSAGE =
  'Missing, unknown or revoked worker token: send "Authorization: Bearer <token>" with this worker\'s own ' +
  'token (create one with renderbridge admin create-worker-token --name NAME and give it to the worker as ' +
  'RENDERBRIDGE_WORKER_TOKEN). API keys do not work here.';

/** A last-used stamp is written at most this often per token: a write per call would cost more than the lookup. */
const MARK_USED_EVERY_MS = 60_000;

export interface WorkerAuthOptions {
  /** Per-worker tokens (the state store). Default none: only the legacy token works. */
  tokens?: WorkerTokenAuth;
  /** The deprecated farm-wide token (config.workerToken). Default none: refused. */
  legacyToken?: string;
  /** Each token's request budget on the worker API, apart from tenants' budgets. Default none: unlimited. */
  limiter?: RateLimiter;
  /** Reports a failed last-used stamp (never fails the call). Default: dropped. */
  onError?: (err: unknown) => void;
}

/** Both sides hashed to the same length first, so the comparison takes the same time for any guess. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The onRequest hook of the worker routes: 401 with the error body unless the bearer is a live worker token. */
export function makeWorkerAuthenticate(opts: WorkerAuthOptions) {
  if (opts.legacyToken === '')
    throw new Error(
      'the worker token is empty: set RENDERBRIDGE_WORKER_TOKEN to a long random secret, or leave it unset',
    );
  const legacy = opts.legacyToken ? digest(opts.legacyToken) : undefined;
  const lastMarked = new Map<string, number>();
  return async function authenticateWorker(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers.authorization;
    const presented = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    if (presented === undefined) throw new ApiError('UNAUTHORIZED', { message: UNAUTHORIZED_MESSAGE });
    let identity: WorkerIdentity | undefined;
    if (legacy && timingSafeEqual(digest(presented), legacy)) identity = { name: null, bucket: 'legacy' };
    else if (opts.tokens) {
      const rec = await opts.tokens.findWorkerToken(hashWorkerToken(presented));
      if (rec && !rec.revokedAt) {
        identity = { name: rec.name, bucket: rec.id };
        const now = Date.now();
        if (now - (lastMarked.get(rec.id) ?? 0) >= MARK_USED_EVERY_MS) {
          if (lastMarked.size > 10_000) lastMarked.clear();
          lastMarked.set(rec.id, now);
          opts.tokens
            .markWorkerTokenUsed(rec.id, new Date(now).toISOString())
            .catch((err: unknown) => opts.onError?.(err));
        }
      }
    }
    if (!identity) throw new ApiError('UNAUTHORIZED', { message: UNAUTHORIZED_MESSAGE });
    if (opts.limiter) {
      const refused = applyDecision(await opts.limiter.take(`worker:${identity.bucket}`), reply);
      if (refused) throw refused;
    }
    req.worker = identity;
  };
}

/** The caller's identity (the hook ran before every route of the plugin). */
export function workerOf(req: FastifyRequest): WorkerIdentity {
  if (!req.worker) throw new ApiError('UNAUTHORIZED', { message: UNAUTHORIZED_MESSAGE });
  return req.worker;
}
