// Builds the OpenAPI 3.1 document of the bridge daemon's local API from DAEMON_ROUTES, the same
// way shared/openapi.ts does for the service. `npm run openapi` writes it to
// shared/daemon/openapi.json (committed); a test fails when the committed file drifts, and another
// checks the Blender add-on's Python client against it.
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { JobIdParams } from '../api/job.js';
import { ErrorBody } from '../api/error-body.js';
import { DAEMON_EVENTS, DAEMON_ROUTES, DaemonState, Health, type DaemonRouteName } from './api.js';
import { DaemonThumbnailQuery, DownloadRequest, DownloadState, RenderComplete, TrackedJob } from './job-schemas.js';
import { PackRequest, PackResult, PackState, Submission, SubmitRequest, SubmitSettings } from './submission-schemas.js';
import { DAEMON_ERRORS, type DaemonErrorName } from './errors.js';

/** Daemon errors every route can answer: the guard's refusals and a crash. */
const COMMON: readonly DaemonErrorName[] = ['DAEMON_UNAUTHORIZED', 'DAEMON_FORBIDDEN_ORIGIN', 'DAEMON_INTERNAL_ERROR'];
/** Errors that reach the service: no key, or no answer from it. */
const SERVICE: readonly DaemonErrorName[] = ['NO_API_KEY', 'SERVICE_UNREACHABLE'];

/** The daemon's own errors per route, besides COMMON (read from daemon/routes and the ports they call). */
export const DAEMON_ROUTE_ERRORS: Record<DaemonRouteName, readonly DaemonErrorName[]> = {
  health: [],
  pack: ['DAEMON_BAD_REQUEST', 'PACK_FAILED', 'DAEMON_NOT_FOUND'],
  startPack: ['DAEMON_BAD_REQUEST'],
  getPack: ['DAEMON_BAD_REQUEST', 'DAEMON_NOT_FOUND'],
  submit: ['DAEMON_BAD_REQUEST', 'DAEMON_NOT_FOUND'],
  listSubmissions: [],
  getSubmission: ['DAEMON_BAD_REQUEST', 'DAEMON_NOT_FOUND'],
  listJobs: [],
  getJob: ['DAEMON_BAD_REQUEST', 'DAEMON_NOT_FOUND', ...SERVICE],
  cancelJob: ['DAEMON_BAD_REQUEST', 'DAEMON_NOT_FOUND', ...SERVICE],
  downloadJob: ['DAEMON_BAD_REQUEST', 'DAEMON_NOT_FOUND', ...SERVICE],
  listJobThumbnails: ['DAEMON_BAD_REQUEST', ...SERVICE],
  getJobThumbnail: ['DAEMON_BAD_REQUEST', ...SERVICE],
  getJobEstimate: ['DAEMON_BAD_REQUEST', ...SERVICE],
  cancelJobEstimate: ['DAEMON_BAD_REQUEST', ...SERVICE],
  setJobPriority: ['DAEMON_BAD_REQUEST', ...SERVICE],
  pauseJob: ['DAEMON_BAD_REQUEST', ...SERVICE],
  resumeJob: ['DAEMON_BAD_REQUEST', ...SERVICE],
  approvePreviews: ['DAEMON_BAD_REQUEST', ...SERVICE],
  events: [],
};

/** Path parameters: jobs are the service's (uuid), submissions the daemon's own ids. */
const PARAMS: Partial<Record<DaemonRouteName, z.ZodObject>> = {
  getSubmission: z.object({ id: z.string().min(1).max(200) }),
  getPack: z.object({ id: z.string().min(1).max(200) }),
  getJob: JobIdParams,
  cancelJob: JobIdParams,
  downloadJob: JobIdParams,
  listJobThumbnails: JobIdParams,
  getJobThumbnail: JobIdParams,
  getJobEstimate: JobIdParams,
  cancelJobEstimate: JobIdParams,
  setJobPriority: JobIdParams,
  pauseJob: JobIdParams,
  resumeJob: JobIdParams,
  approvePreviews: JobIdParams,
};

/** Query parameters. */
const QUERY: Partial<Record<DaemonRouteName, z.ZodObject>> = { getJobThumbnail: DaemonThumbnailQuery };

/** Routes whose body may be left out (POST /jobs/:id/download: no body means the default folder). */
const OPTIONAL_BODY: ReadonlySet<DaemonRouteName> = new Set(['downloadJob']);

/** One SSE frame of GET /events: `event:` is the name, `data:` one line of JSON. */
export const DaemonEventFrame = z
  .discriminatedUnion(
    'event',
    (Object.keys(DAEMON_EVENTS) as (keyof typeof DAEMON_EVENTS)[]).map((name) =>
      z.object({ event: z.literal(name), data: DAEMON_EVENTS[name] }),
    ) as never,
  )
  .meta({
    description:
      'A frame of the stream, shown as JSON: `event: <event>` then `data: <data as one line of JSON>` and ' +
      'a blank line.',
  });

export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

type Responses = ZodOpenApiOperationObject['responses'];
type ResponseObject = Responses[`${1 | 2 | 3 | 4 | 5}${string}`];

function errorResponses(names: readonly DaemonErrorName[]): Record<string, ResponseObject> {
  const byStatus = new Map<number, Set<DaemonErrorName>>();
  for (const n of [...names, ...COMMON]) {
    const s = DAEMON_ERRORS[n].status;
    byStatus.set(s, (byStatus.get(s) ?? new Set()).add(n));
  }
  const out: Record<string, ResponseObject> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: `Error body; name is one of: ${[...list].join(', ')}`,
      content: { 'application/json': { schema: ErrorBody } },
    };
  }
  return out;
}

function successResponse(name: DaemonRouteName): ResponseObject {
  if (name === 'getJobThumbnail') {
    return {
      description: "The image (JPEG or PNG) of the service's thumbnail; the X-Thumbnail-Frame header names its frame",
      content: { 'image/*': { schema: DAEMON_ROUTES[name].response } },
    };
  }
  if (name !== 'events')
    return { description: 'Success', content: { 'application/json': { schema: DAEMON_ROUTES[name].response } } };
  return {
    description:
      'Server-Sent Events, until the caller disconnects: each frame is `event: <name>` and `data: <JSON>`; ' +
      'a `retry:` line says how long to wait before reconnecting; missed events are not replayed (read GET ' +
      `/jobs after each connection). Events: ${Object.keys(DAEMON_EVENTS).join(', ')}; the \`x-events\` ` +
      'extension maps each to the schema of its data.',
    content: { 'text/event-stream': { schema: DaemonEventFrame } },
  };
}

function operation(name: DaemonRouteName): ZodOpenApiOperationObject {
  const r = DAEMON_ROUTES[name];
  const params = PARAMS[name];
  const body = 'body' in r ? r.body : undefined;
  return {
    operationId: name,
    security: [{ bearerAuth: [] }],
    ...(params || QUERY[name]
      ? { requestParams: { ...(params ? { path: params } : {}), ...(QUERY[name] ? { query: QUERY[name] } : {}) } }
      : {}),
    ...(body
      ? { requestBody: { required: !OPTIONAL_BODY.has(name), content: { 'application/json': { schema: body } } } }
      : {}),
    responses: { [String(r.status)]: successResponse(name), ...errorResponses(DAEMON_ROUTE_ERRORS[name]) } as Responses,
  };
}

type Document = ReturnType<typeof createDocument>;
interface FrameSchema {
  oneOf: { properties: { event: { const: string }; data: unknown } }[];
}

/**
 * Adds `x-events` to GET /events: event name -> the schema of its data, read off the
 * generated frame schema (so refs match).
 */
function withEventMap(doc: Document): Document {
  const get = doc.paths?.['/events']?.get as
    | (Record<string, unknown> & { responses: Record<string, { content: Record<string, { schema: FrameSchema }> }> })
    | undefined;
  const frames = get?.responses['200']?.content['text/event-stream']?.schema.oneOf ?? [];
  if (get) get['x-events'] = Object.fromEntries(frames.map((f) => [f.properties.event.const, f.properties.data]));
  return doc;
}

export function buildDaemonOpenApiDocument(): Document {
  const paths: ZodOpenApiPathsObject = {};
  for (const name of Object.keys(DAEMON_ROUTES) as DaemonRouteName[]) {
    const r = DAEMON_ROUTES[name];
    const p = openApiPath(r.path);
    paths[p] = { ...paths[p], [r.method.toLowerCase()]: operation(name) };
  }
  const doc = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'renderbridge bridge daemon (local API)',
      version: String(DaemonState.shape.version.value),
      description:
        'The local bridge on 127.0.0.1 that the Blender add-on, the tray app and the CLI call. Find its port ' +
        'and token in the state file (daemon.json, DaemonState). Requests with an Origin header other than the ' +
        "daemon's own, or a Host other than 127.0.0.1/localhost, are refused (403). Errors of the render " +
        'service (shared/openapi.json) pass through unchanged, with their own name and status, in the same ' +
        'ErrorBody.',
    },
    servers: [{ url: 'http://127.0.0.1:47615', description: 'Default port; the state file has the real one' }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The token of the daemon state file (daemon.json)' },
      },
      schemas: {
        DaemonState,
        Health,
        PackRequest,
        PackResult,
        PackState,
        SubmitSettings,
        SubmitRequest,
        Submission,
        DownloadState,
        TrackedJob,
        DownloadRequest,
        RenderComplete,
      },
    },
    paths,
  });
  return withEventMap(doc);
}
