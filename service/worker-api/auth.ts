// Authentication of the internal worker API: one shared worker token, never an API key.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.js';

const UNAUTHORIZED_MESSAGE =
  'Missing or wrong worker token: send "Authorization: Bearer <token>" with the token the service was started with (RENDERBRIDGE_WORKER_TOKEN). API keys do not work here.';

/** Both sides hashed to the same length first, so the comparison takes the same time for any guess. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The onRequest hook of the worker routes: 401 with the error body unless the bearer is the worker token. */
export function makeWorkerAuthenticate(token: string) {
  if (!token) throw new Error('the worker token is empty: set RENDERBRIDGE_WORKER_TOKEN to a long random secret, or leave it unset to turn the worker API off');
  const expected = digest(token);
  return function authenticateWorker(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const header = req.headers.authorization;
    const presented = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      return done(new ApiError('UNAUTHORIZED', { message: UNAUTHORIZED_MESSAGE }));
    }
    done();
  };
}
