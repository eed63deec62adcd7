// The error registry: every error the API can answer, with its HTTP status and a message that
// says what to do next. The service throws these by name; clients match on `name`.

export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
}

export const ERRORS = {
  VALIDATION_ERROR: {
    status: 400,
    message: 'The request is invalid: fix the fields listed in details and send it again.',
  },
  INVALID_JSON: {
    status: 400,
    message: 'The body is not valid JSON: send a JSON object with Content-Type: application/json.',
  },
  VALIDATE_NOT_ALLOWED: {
    status: 400,
    message:
      'Validation can start only from status "created": a validated job goes straight to render, and a new ' +
      'upload needs a new job.',
  },
  METRICS_UNAUTHORIZED: {
    status: 401,
    message:
      'This service protects /metrics: send "Authorization: Bearer <metrics token>" ' +
      '(RENDERBRIDGE_METRICS_TOKEN of the service).',
  },
  UNAUTHORIZED: {
    status: 401,
    message:
      'Missing, unknown or revoked API key: send "Authorization: Bearer <API_KEY>" with a valid key of your workspace.',
  },
  SIGNATURE_INVALID: {
    status: 403,
    message:
      'The URL signature does not match: use the URL exactly as the API returned it, or ask the API for a new one.',
  },
  CSRF_TOKEN_INVALID: {
    status: 403,
    message:
      'This request came with a dashboard session cookie but without its CSRF token: send the csrfToken from ' +
      'POST /sessions (or GET /sessions/current) in the X-CSRF-Token header, or use "Authorization: Bearer ' +
      '<API_KEY>".',
  },
  WORKER_ID_MISMATCH: {
    status: 403,
    message:
      "This worker token belongs to another worker: a worker reports under its token's name only (ids " +
      'starting "<name>:"). Give each worker its own token (renderbridge admin create-worker-token --name ' +
      'NAME); renderbridge worker takes its name from the token.',
  },
  STORAGE_KEY_NOT_IN_JOB: {
    status: 403,
    message:
      "This object key is not one of the job's: a worker reads and writes only its job's outputs, task logs " +
      'and staged frames, and reads its upload or blobs and the outputs of the jobs it was requeued from. ' +
      'Worker API only.',
  },
  URL_EXPIRED: {
    status: 403,
    message: 'The signed URL has expired: ask the API for a new one (POST /uploads, or GET /jobs/{id}/downloads).',
  },
  JOB_NOT_FOUND: {
    status: 404,
    message: 'No job with this id in your workspace: check the id, or list your jobs with GET /jobs.',
  },
  DEPENDENCY_NOT_FOUND: {
    status: 404,
    message:
      'A job named in scheduling.dependsOn is not a job of your workspace: name only jobs GET /jobs lists ' +
      '(their ids, as POST /jobs returned them).',
  },
  UPLOAD_NOT_FOUND: {
    status: 404,
    message: 'No upload with this slug in your workspace: use the slug returned by POST /uploads.',
  },
  OBJECT_NOT_FOUND: {
    status: 404,
    message: 'The file is no longer stored: it may have been deleted after its retention period.',
  },
  TASK_LOG_NOT_FOUND: {
    status: 404,
    message:
      'This job has no log for that task or attempt (it has not started, or the task id is not one of this ' +
      "job's): list what there is with GET /jobs/{id}/logs/index.",
  },
  THUMBNAIL_NOT_FOUND: {
    status: 404,
    message:
      'This job has no thumbnail of that frame (yet): list the thumbnails it has with GET /jobs/{id}/thumbnails.',
  },
  ESTIMATE_NOT_FOUND: {
    status: 404,
    message: 'This job has no estimate: start one with POST /jobs/{id}/estimate on the validated job.',
  },
  SESSION_NOT_FOUND: {
    status: 404,
    message:
      'This request was not made with a dashboard session (it used an API key): sign in with POST /sessions ' +
      'to get one.',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    message: 'No such endpoint: see GET /api/external/v1/openapi.json for the endpoints this service offers.',
  },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This endpoint does not accept that method: see the OpenAPI document.' },
  NOT_ACCEPTABLE: {
    status: 406,
    message:
      'This endpoint answers with a Server-Sent Events stream: send "Accept: text/event-stream" (EventSource ' +
      'does), or poll GET /jobs and GET /jobs/progress instead.',
  },
  RENDER_NOT_ALLOWED: {
    status: 409,
    message:
      'Render can start only once the job is "validated": poll GET /jobs/{id} until it is, and stop on ' +
      '"failed" or "canceled".',
  },
  JOB_NOT_REQUEUEABLE: {
    status: 409,
    message:
      'Only a failed or canceled job can be requeued, and a completed one only with the frames to render ' +
      'again ({"frames": "1-10,15"}): wait until the job has ended, or cancel it first.',
  },
  ESTIMATE_NOT_ALLOWED: {
    status: 409,
    message:
      'An estimate can start only while the job is "validated" and its render has not been asked for: poll ' +
      'GET /jobs/{id} until it is validated; a job already rendering shows its ETA in GET ' +
      '/jobs/{id}/progress.',
  },
  ESTIMATE_IN_PROGRESS: {
    status: 409,
    message:
      "This job's estimate of another render request is still sampling: read it with GET " +
      '/jobs/{id}/estimate, or cancel it with DELETE /jobs/{id}/estimate and ask again.',
  },
  DEPENDENCY_CYCLE: {
    status: 409,
    message:
      'The jobs in scheduling.dependsOn wait, directly or through others, for this job: it would never start. ' +
      'Drop the job named in metadata.cycle from dependsOn.',
  },
  DEPENDENCY_FAILED: {
    status: 409,
    message:
      'A job this render waits for has failed or was canceled, so its outputs will never come: requeue that job ' +
      '(metadata.dependencyId) and render with the new one in dependsOn, or render without it.',
  },
  JOB_ALREADY_FINISHED: {
    status: 409,
    message:
      'The job has finished (completed, failed or canceled): priority, pause and resume change only a job ' +
      'that has not; requeue it (POST /jobs/{id}/requeue) to render it again.',
  },
  PREVIEW_APPROVAL_NOT_PENDING: {
    status: 409,
    message:
      'This job has no preview approval to give: only a render asked with scheduling.approvePreviews waits for ' +
      'one (GET /jobs/{id} shows scheduling.previews.gate).',
  },
  CANCEL_NOT_ALLOWED: {
    status: 409,
    message: 'The job has already finished (completed, failed or canceled) and cannot be canceled.',
  },
  OBJECT_ALREADY_EXISTS: {
    status: 409,
    message:
      'An object is already stored under this key, and objects are never replaced: keep the stored one, or ' +
      'write under another key. Worker API only.',
  },
  UPLOAD_INCOMPLETE: {
    status: 409,
    message:
      'The file was never completely uploaded: PUT it to the uploadUrl (or request a new upload target if it ' +
      'expired), then create the job.',
  },
  UPLOAD_ALREADY_USED: {
    status: 409,
    message: 'This upload already created a job: each slug creates one job. Upload again for a new job.',
  },
  UPLOAD_ALREADY_COMPLETED: {
    status: 409,
    message: 'This upload URL has already received its file: request a new upload target to upload another.',
  },
  UPLOAD_RESUME_MISMATCH: {
    status: 409,
    message:
      'This PUT continues an upload from a byte the service does not hold (its Content-Range starts past the ' +
      'bytes kept, or names another total size): send the rest from metadata.receivedBytes (GET ' +
      '/uploads/{slug} says it too), or PUT the whole file again without Content-Range.',
  },
  BLOBS_MISSING: {
    status: 409,
    message:
      'The workspace does not hold every blob the project names (never sent, or collected since): query them ' +
      'again with POST /uploads/blobs/query, send the missing ones, then commit.',
  },
  LENGTH_REQUIRED: { status: 411, message: 'Send the file with a Content-Length header or chunked transfer encoding.' },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    message:
      'The upload is too large: files must be below the service limit (5 GiB by default); split the project ' +
      'or remove unused data.',
  },
  STORAGE_QUOTA_EXCEEDED: {
    status: 413,
    message:
      'Your workspace has used its storage quota (uploads, blobs and job outputs; metadata says how much): ' +
      'download what you need and wait until older outputs pass their retention, send a smaller project, or ' +
      'ask the operator for a larger quota (--workspace-storage-quota).',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message:
      'Wrong Content-Type: send JSON as application/json, and uploads with the type matching the file ' +
      '(application/zip for a .zip, application/octet-stream for a .blend).',
  },
  BLOB_PART_SIZE_MISMATCH: {
    status: 400,
    message:
      'The part is not the length its URL was signed for: send exactly the bytes [offset, offset + length) ' +
      'of the blob, raw or gzip-encoded.',
  },
  BLOB_HASH_MISMATCH: {
    status: 422,
    message:
      "The blob's bytes do not hash to the announced sha256, so it was not stored: hash the file again (it " +
      'may have changed while uploading), query again and resend it.',
  },
  OUT_OF_MEMORY: {
    status: 422,
    message:
      'A frame of this job ran out of memory on every render slot that could take it: render on a worker with ' +
      'more memory (add one, or raise its --slot-memory), or make the frame lighter (resolution, subdivision, ' +
      'texture sizes, Simplify), then requeue the job.',
  },
  RANGE_NOT_SATISFIABLE: {
    status: 416,
    message: 'The requested byte range lies outside the file: ask for a range within its size.',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many requests: wait for the Retry-After seconds, then retry with exponential back-off.',
  },
  TOO_MANY_STREAMS: {
    status: 429,
    message:
      'Too many open streams (log follows and event streams) for this API key or this service: close one you ' +
      'no longer watch, then retry after the Retry-After seconds.',
  },
  INTERNAL_ERROR: {
    status: 500,
    message:
      'The service failed unexpectedly: retry later, and report the requestId in metadata if it keeps happening.',
  },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is shutting down or overloaded: retry in a few seconds.' },
  SERVICE_NOT_READY: {
    status: 503,
    message:
      'This instance is not ready: a check of GET /readyz failed (the database, the task queue, storage, or ' +
      'no worker with a fresh heartbeat); see details for which and what to do.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof ERRORS;
export const ERROR_NAMES = Object.keys(ERRORS) as ErrorName[];
