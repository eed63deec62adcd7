import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ErrorName } from '../../shared/errors.js';
import { ApiError } from './api-error.js';

/** Fastify's own error codes, mapped onto the registry. */
const FASTIFY_CODES: Record<string, ErrorName> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

const BY_STATUS: Record<number, ErrorName> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    const where = (err as { validationContext?: string }).validationContext ?? 'body';
    return new ApiError('VALIDATION_ERROR', {
      details: err.validation.map((v) => ({
        code: v.keyword,
        path: [where, ...v.instancePath.split('/').filter(Boolean)],
        message: v.message ?? 'invalid value',
      })),
    });
  }
  const fe = err as Partial<FastifyError> & { status?: number };
  const byCode = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (byCode)
    return new ApiError(
      byCode,
      byCode === 'INVALID_JSON'
        ? { details: [{ code: 'invalid_json', path: ['body'], message: String(fe.message) }] }
        : {},
    );
  if (err instanceof SyntaxError && (fe.statusCode === 400 || fe.status === 400)) return new ApiError('INVALID_JSON');
  const status = fe.statusCode ?? fe.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(BY_STATUS[status] ?? 'VALIDATION_ERROR');
  }
  return new ApiError('INTERNAL_ERROR');
}

/** Every error, including unknown routes and crashes, answers with the spec's error body. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.statusCode >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ error: apiErr.errorName, statusCode: apiErr.statusCode }, 'request refused');
    void reply.headers(apiErr.headers).code(apiErr.statusCode).send(apiErr.body(req.id));
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send(new ApiError('ROUTE_NOT_FOUND').body(req.id));
  });
}

/** What the router refuses before any route runs: a path parameter it cannot decode, or one longer than any id. */
const ROUTER_REFUSALS: Record<string, string> = {
  FST_ERR_BAD_URL:
    'The URL has a malformed percent-encoding (a % not followed by two hex digits): encode path parameters ' +
    'with encodeURIComponent.',
  FST_ERR_MAX_PARAM_LENGTH:
    'A path parameter is far longer than any id: job ids are UUIDs such as 3f2b8c1e-9d4a-4e6f-8b7c-2a1d0e9f8c7b.',
};

type Hook = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

function send(err: unknown, req: FastifyRequest, reply: FastifyReply, code?: string): void {
  const message = code ? ROUTER_REFUSALS[code] : undefined;
  const apiErr = message
    ? new ApiError('VALIDATION_ERROR', { details: [{ code: 'invalid_path', path: ['params'], message }] })
    : toApiError(err);
  req.log.info(
    { error: apiErr.errorName, statusCode: apiErr.statusCode, ...(code ? { code } : {}) },
    'request refused',
  );
  void reply.header('x-request-id', req.id).headers(apiErr.headers).code(apiErr.statusCode).send(apiErr.body(req.id));
}

/**
 * Fastify's `frameworkErrors`: the router's own refusals get the spec's error body (400
 * VALIDATION_ERROR, as a short invalid id does) instead of fastify's. They skip the onRequest
 * hooks, so the credentials check `authFor` names for the path runs here first: without a valid
 * key the answer is 401, as on any other API path.
 */
export function makeFrameworkErrors(authFor: (req: FastifyRequest) => Hook | undefined) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    const auth = authFor(req);
    if (!auth) return send(err, req, reply, err.code);
    auth(req, reply, (authErr) => (authErr ? send(authErr, req, reply) : send(err, req, reply, err.code)));
  };
}
