// A per-key cap on requests in progress at once, for the routes whose work grows with their body
// (a blob query or commit names up to 200,000 blobs). The request budget bounds how many a key
// sends in a minute; this bounds how many this process works on for it at the same moment, so
// one key's queue of heavy requests cannot stand between another tenant's request and its answer
// (bench:attack). Per process: each instance protects its own event loop.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';

export class InFlightLimit {
  private readonly counts = new Map<string, number>();

  constructor(
    /** Requests of one key in progress at once on the guarded routes. */
    private readonly max: number,
    /** What the requests are, for the refusal ("blob queries and commits"). */
    private readonly what: string,
  ) {}

  /**
   * An onRequest hook (after authentication, before the body is read): refuses with 429
   * RATE_LIMITED and Retry-After 1 when the key already has `max` in progress; else counts the
   * request until its answer is sent or its connection closes.
   */
  readonly hook = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    const key = req.auth?.keyId;
    if (!key) return done();
    const now = this.counts.get(key) ?? 0;
    if (now >= this.max) {
      return done(
        new ApiError('RATE_LIMITED', {
          message:
            `This API key already has ${this.max} ${this.what} in progress: wait for their answers, then send ` +
            `the next one.`,
          metadata: { inFlightLimit: this.max, retryAfterSeconds: 1 },
          headers: { 'retry-after': '1' },
        }),
      );
    }
    this.counts.set(key, now + 1);
    reply.raw.once('close', () => {
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    });
    done();
  };
}
