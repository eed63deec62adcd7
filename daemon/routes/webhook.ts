// POST DAEMON_WEBHOOK_PATH: the receiver of the service's signed onRenderComplete webhooks. The
// signature (`Renderbridge-Signature: t=...,v1=<HMAC-SHA256>`, shared/webhooks/signing.ts) is
// checked over the raw body with config.webhookSecret, in constant time, within 300 s of its
// timestamp; a valid event makes the tracker poll at once. Without a secret the route is a 404.
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../shared/webhooks/signing.js';
import { DAEMON_WEBHOOK_PATH } from '../../shared/daemon/api.js';
import { DaemonError } from '../errors.js';
import type { Tracker } from '../ports.js';

export interface WebhookRouteDeps {
  /** The shared signing secret (config.webhookSecret); null turns the receiver off. */
  secret: string | null;
  tracker: Tracker;
  /** Accepted distance of the signature's timestamp from now, seconds. Default 300. */
  toleranceSeconds?: number;
}

/** What the service sends (docs/guides/webhooks.md); other fields are ignored. */
const WebhookEvent = z.object({ event: z.string(), jobId: z.string().optional(), status: z.string().optional() });

export const webhookRoutes: FastifyPluginAsync<WebhookRouteDeps> = async (app, deps) => {
  // The HMAC covers the exact bytes sent: keep them, parse afterwards.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, body));

  app.post(DAEMON_WEBHOOK_PATH, async (req, reply) => {
    if (!deps.secret)
      throw new DaemonError(
        'DAEMON_NOT_FOUND',
        'The webhook receiver is off: start the daemon with a webhook secret (RENDERBRIDGE_WEBHOOK_SECRET) ' +
          'to turn it on.',
      );
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const header = req.headers[SIGNATURE_HEADER.toLowerCase()];
    const verdict = verifyWebhookSignature(
      deps.secret,
      typeof header === 'string' ? header : undefined,
      raw,
      deps.toleranceSeconds,
    );
    if (!verdict.ok) throw new DaemonError('WEBHOOK_SIGNATURE_INVALID', undefined, { reason: verdict.reason });
    let event: z.infer<typeof WebhookEvent> | undefined;
    try {
      event = WebhookEvent.parse(JSON.parse(raw.toString('utf8')));
    } catch {
      throw new DaemonError('DAEMON_BAD_REQUEST', 'The webhook body is not an event object.', {}, [
        { code: 'invalid_json', path: ['body'], message: 'expected a JSON event object' },
      ]);
    }
    if (event.event === 'onRenderComplete') deps.tracker.kick();
    req.log.info({ webhookEvent: event.event, jobId: event.jobId }, 'webhook received');
    return reply.code(200).send({ received: true });
  });
};
