// Public entry of the client: `import { RenderJobClient } from '<pkg>/shared/client/index.js'`.
export { RenderJobClient } from './client.js';
export type { CallOptions, ListJobsParams, RenderResult, UploadProjectOptions } from './client.js';
export { DEFAULT_OPTIONS } from './options.js';
export type { RenderJobClientOptions } from './options.js';
export { ApiError, JobStoppedError, NetworkError, ResponseFormatError, WaitTimeoutError, errorBodyFrom } from './errors.js';
export { backoffDelay, parseRetryAfter, sleep } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export { contentTypeFor, fileTypeFor, uploadFile } from './upload.js';
export type { UploadFileOptions, UploadResult } from './upload.js';
export { collectOutputs, fileNameFromUrl, videoLinks, zipLinks, zipOutputs } from './downloads.js';
export type { OutputFile, VideoLink, ZipLinksInfo, ZipState } from './downloads.js';
export { DEFAULT_WAIT_INTERVAL_MS, waitForStatus } from './wait.js';
export type { GetJob, WaitOptions } from './wait.js';
