// Builds the OpenAPI 3.1 document from the route table. `npm run openapi` writes it to
// shared/openapi.json (committed); a test fails when the committed file drifts.
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { API_PREFIX, OPENAPI_VERSION_LABEL } from './constants.js';
import { ErrorBody } from './api/error-body.js';
import { BlobPartResult } from './api/blob-upload.js';
import { ERRORS, type ErrorName } from './errors.js';
import { COMMON_ERRORS, ROUTES, type RouteDef } from './routes.js';
import { EXTENSION_SUMMARIES } from './extensions.js';

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

type Responses = ZodOpenApiOperationObject['responses'];
type ResponseObject = Responses[`${1 | 2 | 3 | 4 | 5}${string}`];

function errorResponses(names: readonly ErrorName[]): Record<string, ResponseObject> {
  const byStatus = new Map<number, ErrorName[]>();
  for (const n of [...names, ...COMMON_ERRORS]) {
    const s = ERRORS[n].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), n]);
  }
  const out: Record<string, ResponseObject> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: `Error body; name is one of: ${[...new Set(list)].join(', ')}`,
      content: { 'application/json': { schema: ErrorBody } },
    };
  }
  return out;
}

/** How each route may authenticate: a key, or a dashboard session cookie; signing in needs neither beforehand. */
function security(r: RouteDef): ZodOpenApiOperationObject['security'] {
  return r.auth === 'sign-in' ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }];
}

/** A session cookie alone cannot change anything: requests other than GET also need the session's CSRF token. */
function errorsOf(r: RouteDef): readonly ErrorName[] {
  return r.method === 'GET' || r.auth === 'sign-in' || r.errors.includes('CSRF_TOKEN_INVALID')
    ? r.errors
    : [...r.errors, 'CSRF_TOKEN_INVALID'];
}

function operation(name: string, r: RouteDef): ZodOpenApiOperationObject {
  const responses: Record<string, ResponseObject> = {};
  for (const [status, schema] of Object.entries(r.responses)) {
    const image = r.produces === 'image/*';
    responses[status] = {
      description:
        status === '200' && 'headers' in r && r.headers
          ? 'Replay of an earlier call'
          : image
            ? 'The image'
            : r.produces
              ? 'A stream of events; each `data` is this document'
              : 'Success',
      content: { [r.produces ?? 'application/json']: { schema } },
      ...(status === '200' && r.headers
        ? { headers: z.object({ 'X-Idempotent-Replay': z.literal('true').optional() }) }
        : {}),
      ...(image
        ? { headers: z.object({ 'X-Thumbnail-Frame': z.string().meta({ description: 'The frame the image shows' }) }) }
        : {}),
    };
  }
  Object.assign(responses, errorResponses(errorsOf(r)));
  return {
    operationId: name,
    summary: r.summary,
    // Extensions are tagged and flagged so a reader (and a client generator) tells them from the spec.
    tags: [r.extension ? `extension: ${r.extension}` : 'spec v1'],
    ...(r.extension ? { 'x-renderbridge-extension': r.extension } : {}),
    security: security(r),
    ...(r.params || r.query
      ? {
          requestParams: {
            ...(r.params ? { path: r.params as z.ZodObject } : {}),
            ...(r.query ? { query: r.query as z.ZodObject } : {}),
          },
        }
      : {}),
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
    responses: responses as Responses,
  };
}

export function buildOpenApiDocument(): ReturnType<typeof createDocument> {
  const paths: ZodOpenApiPathsObject = {};
  for (const [name, r] of Object.entries(ROUTES) as [string, RouteDef][]) {
    const p = openApiPath(r.path);
    paths[p] = { ...paths[p], [r.method.toLowerCase()]: operation(name, r) };
  }
  paths['/{uploadUrl}'] = {
    put: {
      operationId: 'putUpload',
      summary: 'PUT the file bytes to the opaque uploadUrl from POST /uploads (not under the API prefix)',
      description:
        'One request, raw bytes, Content-Type matching the file (application/zip for a .zip). Below 5 GiB. ' +
        'The URL is presigned and expires at expiresAt; no Authorization header is needed.',
      servers: [{ url: '/' }],
      requestParams: { path: z.object({ uploadUrl: z.string() }) },
      requestBody: {
        required: true,
        content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } },
      },
      responses: {
        '200': { description: 'Stored' },
        ...errorResponses([
          'SIGNATURE_INVALID',
          'URL_EXPIRED',
          'UPLOAD_ALREADY_COMPLETED',
          'PAYLOAD_TOO_LARGE',
          'UNSUPPORTED_MEDIA_TYPE',
          'LENGTH_REQUIRED',
        ]),
      },
      security: [],
    },
  };
  paths['/{blobPartUrl}'] = {
    put: {
      operationId: 'putBlobPart',
      summary:
        'PUT one part of a blob to an uploadUrl from POST /uploads/blobs/query (extension: content-addressed-uploads)',
      description:
        'The raw bytes [offset, offset + length) of the blob, Content-Type application/octet-stream, ' +
        'optionally with Content-Encoding: gzip. A part may be sent again (a retry replaces it). Once every ' +
        'part is in, the service hashes the whole blob: bytes that do not match its sha256 are refused (422 ' +
        'BLOB_HASH_MISMATCH) and never stored. A 503 SERVICE_UNAVAILABLE means the blob is being deleted after ' +
        'its retention period: query again after Retry-After. The URL is signed and expires; no Authorization ' +
        'header is needed.',
      servers: [{ url: '/' }],
      tags: ['extension: content-addressed-uploads'],
      'x-renderbridge-extension': 'content-addressed-uploads',
      requestParams: { path: z.object({ blobPartUrl: z.string() }) },
      requestBody: {
        required: true,
        content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } },
      },
      responses: {
        '200': { description: 'Part stored', content: { 'application/json': { schema: BlobPartResult } } },
        ...errorResponses([
          'SIGNATURE_INVALID',
          'URL_EXPIRED',
          'BLOB_PART_SIZE_MISMATCH',
          'BLOB_HASH_MISMATCH',
          'UNSUPPORTED_MEDIA_TYPE',
          'LENGTH_REQUIRED',
          'SERVICE_UNAVAILABLE',
        ]),
      },
      security: [],
    },
  };
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'renderbridge render job service',
      version: OPENAPI_VERSION_LABEL,
      description:
        'Upload a scene project, create a job, validate it, render it, watch it, cancel it and download its outputs.',
    },
    servers: [{ url: API_PREFIX }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key, prefixed rb_live_' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'rb_session',
          description:
            'Dashboard session from POST /sessions (extension dashboard-sessions): HttpOnly, ' +
            "SameSite=Strict; named __Host-rb_session and Secure when the service's public URL is https. " +
            "Requests other than GET must also send the session's X-CSRF-Token.",
        },
      },
    },
    tags: [
      { name: 'spec v1', description: 'Routes of the render job service API v1 specification.' },
      ...Object.entries(EXTENSION_SUMMARIES).map(([name, description]) => ({
        name: `extension: ${name}`,
        description,
      })),
      {
        name: 'extension: discovery',
        description: 'GET /extensions lists the extensions this service offers; a spec-only service answers 404.',
      },
    ],
    paths,
  });
}
