// GET /events (extension job-events): the workspace's job changes as Server-Sent Events, read
// from the JobFeed. A stream opens with a `job` event per recent job, then sends one whenever a
// job changes; a comment line every heartbeat keeps proxies from closing it. A stream opened with
// a dashboard session ends (event `session-ended`) once that session has: signed out, expired,
// or its key revoked; one opened with a key ends (event `key-revoked`) once the key is revoked. A client too slow to
// take the events is cut off (it reconnects and starts from a fresh snapshot) rather than held in memory. Streams are
// capped per key and per process
// (StreamGate: 429 TOO_MANY_STREAMS) and last at most `maxMs`, ending with `stream-ended`: a
// stream nobody closes must not hold its place forever; EventSource reconnects by itself.
import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ROUTES } from '../../shared/routes.js';
import type { JobFeed } from '../events/job-feed.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { SessionAuth } from '../http/session-auth.js';
import { hashApiKey } from '../domain/api-keys.js';
import type { KeyStore } from '../ports/keys.js';
import type { StreamGate } from '../http/stream-gate.js';

export interface EventRouteDeps {
  feed: JobFeed;
  /** Checks at each heartbeat that a session-authenticated stream's session still holds. */
  sessions?: SessionAuth;
  /** Checks at each heartbeat that a key-authenticated stream's key is not revoked. */
  keys: Pick<KeyStore, 'findByHash'>;
  /** Ms between heartbeat comments (and session checks). Default 15000. */
  heartbeatMs?: number;
  /** Places for open streams, per key and per process. Default none: not capped (tests of other things). */
  gate?: StreamGate;
  /** Longest a stream stays open, ms; it then ends with `event: stream-ended`. Default 3600000. */
  maxMs?: number;
}

/** Bytes a stream may have waiting for a slow client before it is cut off. */
const MAX_BUFFERED = 1024 * 1024;

function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'text/event-stream' || type === 'text/*' || type === '*/*';
  });
}

export const eventRoutes: FastifyPluginAsyncZod<EventRouteDeps> = async (app, deps) => {
  const open = new Set<ServerResponse>();
  // Open streams would keep the server from closing: end them first.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });
  app.addHook('onClose', async () => deps.feed.close());

  const route = ROUTES.streamJobEvents;
  app.get(route.path, { schema: { querystring: route.query } }, async (req, reply) => {
    const auth = requireAuth(req);
    if (!acceptsEventStream(req.headers.accept)) throw new ApiError('NOT_ACCEPTABLE');
    const release = deps.gate?.acquire(auth.keyId) ?? (() => undefined);
    reply.hijack();
    const res = reply.raw;
    // Headers set so far (request id, rate-limit budget) go out with the stream's own.
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // nginx buffers responses unless told not to: events would arrive in bursts.
      'x-accel-buffering': 'no',
    });
    open.add(res);
    let ended = false;
    const end = (last?: string) => {
      if (ended) return;
      ended = true;
      if (last && !res.destroyed) res.write(last);
      res.end();
    };
    const write = (text: string) => {
      if (ended || res.destroyed) return;
      if (res.writableLength > MAX_BUFFERED) return void res.destroy();
      res.write(text);
    };
    write('retry: 3000\n: connected\n\n');
    const bearer = req.dashboardSession
      ? undefined
      : /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const keyHash = bearer ? hashApiKey(bearer) : undefined;
    let unsubscribe: (() => void) | undefined;
    const heartbeat = setInterval(() => {
      write(`: heartbeat ${new Date().toISOString()}\n\n`);
      const s = req.dashboardSession;
      const failed = (err: unknown) => req.log.warn({ err }, 'checking the credentials of an event stream failed');
      if (s && deps.sessions) {
        deps.sessions.alive(s.id).then((alive) => alive || end('event: session-ended\ndata: {}\n\n'), failed);
      } else if (keyHash) {
        Promise.resolve(deps.keys.findByHash(keyHash)).then(
          (k) => (k && !k.revokedAt) || end('event: key-revoked\ndata: {}\n\n'),
          failed,
        );
      }
    }, deps.heartbeatMs ?? 15_000);
    const maxSeconds = Math.round((deps.maxMs ?? 3_600_000) / 1000);
    const lifetime = setTimeout(
      () =>
        end(
          `event: stream-ended\ndata: ${JSON.stringify({ reason: 'max-duration', maxSeconds, reconnect: true })}\n\n`,
        ),
      deps.maxMs ?? 3_600_000,
    );
    res.on('close', () => {
      ended = true;
      release();
      clearTimeout(lifetime);
      clearInterval(heartbeat);
      unsubscribe?.();
      open.delete(res);
    });
    const stop = await deps.feed.subscribe(auth.workspaceId, (event) =>
      write(`event: job\ndata: ${JSON.stringify(event)}\n\n`),
    );
    if (ended) stop();
    else unsubscribe = stop;
  });
};
