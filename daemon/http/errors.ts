// Every error the daemon answers uses the service's error body (message, name, details, type,
// metadata with the requestId):
// - DaemonError: its registry name and status (shared/daemon/errors.ts);
// - the shared client's ApiError: the service's status and body, passed through unchanged (plus
//   its Retry-After), so a client handles the service's errors and the daemon's with one code path;
// - no answer from the service (NetworkError) or an answer off the contract: SERVICE_UNREACHABLE;
// - request validation (zod) and unreadable bodies: DAEMON_BAD_REQUEST with details, type `zod`;
// - unknown routes: DAEMON_NOT_FOUND; anything else: DAEMON_INTERNAL_ERROR (500), never with a stack.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import type { ErrorBody, ErrorDetail } from '../../shared/api/error-body.js';
import { ApiError, NetworkError, ResponseFormatError } from '../../shared/client/errors.js';
import { DAEMON_ERRORS } from '../../shared/daemon/errors.js';
import { DaemonError } from '../errors.js';

export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** The service's own answer: sent as the service gave it (its requestId included), not re-labelled. */
  passthrough?: boolean;
}

function daemonAnswer(err: DaemonError, type: ErrorBody['type'] = 'api'): ErrorAnswer {
  return { status: err.status, body: { ...err.toBody(), type }, headers: {} };
}

function badRequest(details: ErrorDetail[], message?: string): ErrorAnswer {
  return daemonAnswer(new DaemonError('DAEMON_BAD_REQUEST', message, {}, details), 'zod');
}

/** The answer for any error a handler or fastify raised. */
export function toErrorAnswer(err: unknown): ErrorAnswer {
  if (err instanceof DaemonError) return daemonAnswer(err);
  if (err instanceof ApiError) {
    const headers: Record<string, string> = {};
    if (err.retryAfterMs !== undefined) headers['retry-after'] = String(Math.ceil(err.retryAfterMs / 1000));
    return { status: err.status, body: err.body, headers, passthrough: true };
  }
  if (err instanceof NetworkError) {
    return daemonAnswer(
      new DaemonError('SERVICE_UNREACHABLE', undefined, { reason: err.message, timedOut: err.timedOut }),
    );
  }
  if (err instanceof ResponseFormatError) {
    const message =
      'The render service answered with a body that does not match the API contract: check that the service ' +
      'URL points at a renderbridge-compatible service.';
    return daemonAnswer(new DaemonError('SERVICE_UNREACHABLE', message, { reason: err.message }));
  }
  if (hasZodFastifySchemaValidationErrors(err)) {
    const where = (err as { validationContext?: string }).validationContext ?? 'body';
    return badRequest(
      err.validation.map((v) => ({
        code: v.keyword,
        path: [where, ...v.instancePath.split('/').filter(Boolean)],
        message: v.message ?? 'invalid value',
      })),
    );
  }
  if (err instanceof ZodError) {
    return badRequest(err.issues.map((i) => ({ code: i.code, path: i.path.map(String), message: i.message })));
  }
  const fe = err as Partial<FastifyError>;
  const status = fe.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return daemonAnswer(new DaemonError('DAEMON_NOT_FOUND'));
    // Unreadable JSON, a wrong Content-Type, an oversized body: fastify's own 4xx errors.
    const detail = {
      code: fe.code ?? `HTTP_${status}`,
      path: ['body'],
      message: String(fe.message ?? 'invalid request'),
    };
    return badRequest([detail]);
  }
  const body: ErrorBody = {
    name: 'DAEMON_INTERNAL_ERROR',
    message: DAEMON_ERRORS.DAEMON_INTERNAL_ERROR.message,
    details: [],
    type: 'api',
    metadata: {},
  };
  return { status: 500, body, headers: {} };
}

/** Answers `err` with the error body, logging crashes as errors and refusals as info. */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const answer = toErrorAnswer(err);
  if (answer.status >= 500 && !(err instanceof DaemonError) && !(err instanceof ApiError)) {
    req.log.error({ err }, 'request failed');
  } else {
    req.log.info({ error: answer.body.name, statusCode: answer.status }, 'request refused');
  }
  const body = answer.passthrough
    ? answer.body
    : { ...answer.body, metadata: { ...answer.body.metadata, requestId: req.id } };
  void reply.header('x-request-id', req.id).headers(answer.headers).code(answer.status).send(body);
}

/**
 * Fastify's `frameworkErrors` (a path the router cannot decode, an overlong parameter): these
 * skip the onRequest hooks, so the guard runs here first and a request without the token learns
 * nothing more than it would elsewhere.
 */
export function makeFrameworkErrors(guard: (req: FastifyRequest, reply: FastifyReply) => Promise<void>) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    guard(req, reply).then(
      () => sendError(err, req, reply),
      (refusal: unknown) => sendError(refusal, req, reply),
    );
  };
}

/** Installs the error and not-found handlers on the daemon's app. */
export function installDaemonErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => {
    const body = new DaemonError('DAEMON_NOT_FOUND').toBody();
    void reply.code(404).send({ ...body, metadata: { ...body.metadata, requestId: req.id } });
  });
}
