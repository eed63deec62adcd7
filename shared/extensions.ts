// Extensions of the v1 API: what this service offers beyond the spec. The spec's routes never
// change behaviour; an extension only adds routes (marked with `extension` in shared/routes.ts)
// and is listed by GET /extensions, so a client can tell whether a service offers it. A service
// without GET /extensions (a plain spec service) answers 404: it offers none.
import { z } from 'zod';

export const EXTENSION_NAMES = [
  'content-addressed-uploads',
  'resumable-uploads',
  'dashboard-sessions',
  'job-events',
  'job-tasks',
  'job-requeue',
  'workers',
  'task-logs',
  'frame-stats',
  'estimate',
  'frame-thumbnails',
  'scheduling',
] as const;
export const ExtensionName = z.enum(EXTENSION_NAMES);
export type ExtensionName = z.infer<typeof ExtensionName>;

/** What each extension is, for the OpenAPI document and GET /extensions. */
export const EXTENSION_SUMMARIES: Readonly<Record<ExtensionName, string>> = {
  'content-addressed-uploads':
    'Upload a project as content-addressed blobs (sha256 + size): only blobs the workspace does not hold yet ' +
    'are sent, in parts that can be retried one by one; a commit yields an ordinary upload slug for POST ' +
    '/jobs.',
  'resumable-uploads':
    'A single PUT to an uploadUrl whose connection broke is continued instead of sent again: the service ' +
    'keeps the bytes it received, GET /uploads/{slug} says how many, and a PUT with Content-Range: bytes ' +
    "N-(TOTAL-1)/TOTAL sends only the rest. A PUT without Content-Range is the spec's and starts the file " +
    'over.',
  'dashboard-sessions':
    'Exchange an API key for a short-lived HttpOnly session cookie (the farm dashboard at / signs in this ' +
    'way); with the cookie, every request that is not GET carries the X-CSRF-Token the session was given.',
  'job-events':
    "A Server-Sent Events stream of the workspace's job changes (status and frame counters), with " +
    'heartbeats; poll GET /jobs and GET /jobs/progress where it cannot be used.',
  'job-requeue':
    'Requeue a failed or canceled job, or re-render chosen frames of a completed one, without a new upload: ' +
    'a new job (linked both ways, see GET /jobs/{id}/lineage) validated again from the same stored project, ' +
    'rendered with the old request, copying the frames the old job finished; a repeated request answers the ' +
    'same new job.',
  workers:
    "The farm's worker processes (render slots and the task each runs, GPUs, Blender builds, last heartbeat, " +
    "jobs whose blocklist keeps them off) and the queue's open tasks by kind; another workspace's work shows " +
    'without its job.',
  'task-logs':
    "The full output of every task attempt (Blender, ffmpeg and the worker's own lines, timestamped, capped " +
    "to its first and last halves), stored beside the job's outputs as it is written: as text with a header " +
    'per attempt, followed live until the job ends, and an index of tasks and attempts.',
  'frame-stats':
    "What each finished frame of a job took (render seconds, peak memory from Blender's own report, device, " +
    'slot, Blender build), paged by frame with a summary (median and spread of frame time, highest peak ' +
    'memory); GET /jobs/{id}/progress gains `etaBand`, the ETA with a low-high band from the frames finished ' +
    'so far and the slots working on the job.',
  estimate:
    'Know before you render: POST /jobs/{id}/estimate renders sample frames of a validated job (first, ' +
    "middle and last, more where frame times differ) on the farm's render slots with the render's own " +
    'settings and answers the wall time on the farm now, compute time, normalizedSeconds, cost at the ' +
    "operator's rates, peak memory against each kind of slot and output size, each with a band and the " +
    'frames it rests on, and warnings in words; the sampled frames are kept, so a render with the same ' +
    'request does not render them again. The job stays `validated`.',
  'frame-thumbnails':
    'A thumbnail of each finished frame (JPEG or PNG, at most 256 px a side, EXR tone-mapped), made by the ' +
    "worker as the frame finishes and stored beside the job's outputs: listed in frame order with signed " +
    "URLs, the latest finished frame and the shot's fps (for a flip-book) while the job renders and after, " +
    'and served one at a time.',
  scheduling:
    'Schedule jobs on a shared farm: POST /jobs/{id}/render takes `scheduling` with a priority (0-100, higher ' +
    'claimed first, default 50), preview frames first (the first, last and middle frames before the rest, on ' +
    'by default), an optional approval gate after them (POST /jobs/{id}/approve-previews gives "go") and the ' +
    "jobs of the workspace to wait for (each must complete, else the job fails with DEPENDENCY_FAILED); a job's " +
    'priority changes while it has not finished, and it can be paused and resumed (running frames finish). ' +
    'GET /jobs/{id} shows it all in `scheduling`. GET /jobs/{id}/queue-ahead tells the frames and jobs claimed ' +
    "before a job's next frame and the expected wait; GET /farm/share each workspace's weight, share of the " +
    'busy render slots and frames waiting.',
  'job-tasks':
    'The tasks of a job (validation, planning, each render chunk with its frames, finalize) with state, ' +
    'worker, attempt, duration and exit reason.',
};

export const Extension = z
  .object({
    name: ExtensionName,
    /** Bumped on an incompatible change; a client checks the version it speaks. */
    version: z.int().min(1),
    summary: z.string(),
    /** operationIds (route names of shared/routes.ts) the extension adds. */
    routes: z.array(z.string()),
  })
  .meta({ id: 'Extension' });
export type Extension = z.infer<typeof Extension>;

export const ExtensionList = z
  .object({ data: z.object({ extensions: z.array(Extension) }) })
  .meta({ id: 'ExtensionList' });
export type ExtensionList = z.infer<typeof ExtensionList>;
