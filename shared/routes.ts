// The contract: every endpoint of the v1 API with its schemas, success status and errors (the
// extensions' own: extension-routes.ts). The service registers its routes from this table, the
// client calls through it, and the OpenAPI document is generated from it.
import { z } from 'zod';
import {
  CreateJobBody,
  Job,
  JobEnvelope,
  JobIdParams,
  JobList,
  ListJobsQuery,
  StartRenderResponse,
  ValidateBody,
} from './api/job.js';
import { CreateUploadBody, UploadTarget } from './api/upload.js';
import { ExtensionList, type ExtensionName } from './extensions.js';
import { Downloads } from './api/downloads.js';
import { ProgressList } from './api/progress.js';
import { JobProgressWithEtaEnvelope } from './api/frame-stats.js';
import { RenderJobBody } from './api/scheduling.js';
import { EXTENSION_ROUTES } from './extension-routes.js';
import { SCHEDULING_ROUTES } from './scheduling-routes.js';
import { FARM_SHARE_ROUTES } from './farm-share-routes.js';
import type { ErrorName } from './errors.js';

export interface RouteDef {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the API prefix, fastify style (`:id`). */
  readonly path: string;
  readonly summary: string;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** Success status codes and their bodies; the first is the usual one. */
  readonly responses: Readonly<Record<number, z.ZodType>>;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Media type of the success body. Default `application/json`; `text/event-stream` for a stream of
   * events whose data the response schema describes; `text/plain` for text (a string schema);
   * `image/*` for an image's bytes (JPEG or PNG, named by Content-Type).
   */
  readonly produces?: 'text/event-stream' | 'text/plain' | 'image/*';
  /**
   * How the route authenticates. Default `key`: Bearer key or session cookie; `sign-in`: the
   * key may come in the body instead.
   */
  readonly auth?: 'sign-in';
  /** Errors this endpoint can answer besides the ones every endpoint can (COMMON_ERRORS). */
  readonly errors: readonly ErrorName[];
  /**
   * Set on routes the spec does not have: the extension they belong to (`discovery` is GET
   * /extensions itself, which this service always offers). Absent: a route of the spec.
   */
  readonly extension?: ExtensionName | 'discovery';
  /**
   * A POST that may be sent again after a network error without harm (a repeat is a replay, or
   * only makes something nobody uses): clients retry it like a GET. Absent: not retried.
   */
  readonly retrySafe?: true;
}

/** Errors any authenticated endpoint may answer. */
export const COMMON_ERRORS: readonly ErrorName[] = ['UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL_ERROR'];

const jobRoute = { params: JobIdParams } as const;

export const ROUTES = {
  createUpload: {
    method: 'POST',
    path: '/uploads',
    summary: 'Request a presigned upload target for a .blend or .zip',
    body: CreateUploadBody,
    responses: { 201: UploadTarget },
    errors: ['VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'STORAGE_QUOTA_EXCEEDED'],
    // A second target nobody PUTs to expires unused.
    retrySafe: true,
  },
  createJob: {
    method: 'POST',
    path: '/jobs',
    summary: 'Create a job from a completed upload',
    body: CreateJobBody,
    responses: { 201: Job },
    errors: [
      'VALIDATION_ERROR',
      'INVALID_JSON',
      'UNSUPPORTED_MEDIA_TYPE',
      'UPLOAD_NOT_FOUND',
      'UPLOAD_INCOMPLETE',
      'UPLOAD_ALREADY_USED',
      'PAYLOAD_TOO_LARGE',
    ],
  },
  listJobs: {
    method: 'GET',
    path: '/jobs',
    summary: "List the workspace's jobs, newest first",
    query: ListJobsQuery,
    responses: { 200: JobList },
    errors: ['VALIDATION_ERROR'],
  },
  getJob: {
    method: 'GET',
    path: '/jobs/:id',
    summary: 'Get one job; data.status is the workflow signal',
    ...jobRoute,
    responses: { 200: JobEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
  },
  validateJob: {
    method: 'POST',
    path: '/jobs/:id/validate',
    summary: 'Start the asynchronous analysis of a created job',
    ...jobRoute,
    body: ValidateBody,
    responses: { 202: Job },
    errors: ['VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'JOB_NOT_FOUND', 'VALIDATE_NOT_ALLOWED'],
  },
  renderJob: {
    method: 'POST',
    path: '/jobs/:id/render',
    summary: 'Start rendering a validated job (a repeat call is an idempotent replay)',
    ...jobRoute,
    // The spec's body; `scheduling` is the scheduling extension's field (absent: the defaults).
    body: RenderJobBody,
    responses: { 202: StartRenderResponse, 200: StartRenderResponse },
    headers: { 'X-Idempotent-Replay': 'true on the 200 answer to a repeated render call' },
    errors: [
      'VALIDATION_ERROR',
      'INVALID_JSON',
      'UNSUPPORTED_MEDIA_TYPE',
      'JOB_NOT_FOUND',
      'RENDER_NOT_ALLOWED',
      'DEPENDENCY_NOT_FOUND',
      'DEPENDENCY_CYCLE',
      'DEPENDENCY_FAILED',
    ],
    retrySafe: true,
  },
  cancelJob: {
    method: 'POST',
    path: '/jobs/:id/cancel',
    summary: 'Cancel a job whose work has not finished',
    ...jobRoute,
    responses: { 200: Job },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'CANCEL_NOT_ALLOWED'],
  },
  getJobProgress: {
    method: 'GET',
    path: '/jobs/:id/progress',
    summary: 'Frame counters of one job (null until the render produces them)',
    ...jobRoute,
    // The spec's progress; `etaBand` is the frame-stats extension's field (absent without it).
    responses: { 200: JobProgressWithEtaEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
  },
  listProgress: {
    method: 'GET',
    path: '/jobs/progress',
    summary: 'Counters of every running job of the workspace ([] when none runs)',
    responses: { 200: ProgressList },
    errors: [],
  },
  getDownloads: {
    method: 'GET',
    path: '/jobs/:id/downloads',
    summary: "Signed, expiring download URLs of a completed job's outputs",
    ...jobRoute,
    responses: { 200: Downloads },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND'],
  },
  getExtensions: {
    method: 'GET',
    path: '/extensions',
    summary: 'Extensions of the v1 API this service offers (a spec-only service answers 404)',
    responses: { 200: ExtensionList },
    errors: [],
    extension: 'discovery',
  },
  ...EXTENSION_ROUTES,
  ...SCHEDULING_ROUTES,
  ...FARM_SHARE_ROUTES,
} as const satisfies Record<string, RouteDef>;

/** Routes of the spec itself (no `extension`). */
export const SPEC_ROUTE_NAMES = (Object.keys(ROUTES) as (keyof typeof ROUTES)[]).filter(
  (n) => !('extension' in ROUTES[n]),
);

export type RouteName = keyof typeof ROUTES;
export type RouteBody<N extends RouteName> = (typeof ROUTES)[N] extends { body: infer B extends z.ZodType }
  ? z.input<B>
  : never;
export type RouteResponse<N extends RouteName> = z.output<
  (typeof ROUTES)[N]['responses'][keyof (typeof ROUTES)[N]['responses']]
>;

/** Fill `:id`-style parameters of a route path. */
export function routePath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:([A-Za-z]+)/g, (_, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`missing path parameter ${k}`);
    return encodeURIComponent(v);
  });
}
