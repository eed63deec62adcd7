// The scheduling extension's routes: change a job's priority, pause and resume it, and give "go"
// to the rest of its frames once its previews are approved. Part of ROUTES (routes.ts).
import { JobEnvelope, JobIdParams } from './api/job.js';
import { SetPriorityBody } from './api/scheduling.js';
import type { RouteDef } from './routes.js';

const jobRoute = { params: JobIdParams } as const;

export const SCHEDULING_ROUTES = {
  setJobPriority: {
    method: 'POST',
    path: '/jobs/:id/priority',
    summary:
      "Change an unfinished job's priority (0-100, higher claimed first): its frames not claimed yet follow " +
      'the new one; running frames finish',
    ...jobRoute,
    body: SetPriorityBody,
    responses: { 200: JobEnvelope },
    errors: ['VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED'],
    extension: 'scheduling',
    retrySafe: true,
  },
  pauseJob: {
    method: 'POST',
    path: '/jobs/:id/pause',
    summary: 'Pause an unfinished job: no new frame of it is claimed until resume; running frames finish',
    ...jobRoute,
    responses: { 200: JobEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED'],
    extension: 'scheduling',
    retrySafe: true,
  },
  resumeJob: {
    method: 'POST',
    path: '/jobs/:id/resume',
    summary: 'Resume a paused job: its frames are claimed again (a job not paused answers as it is)',
    ...jobRoute,
    responses: { 200: JobEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED'],
    extension: 'scheduling',
    retrySafe: true,
  },
  approvePreviews: {
    method: 'POST',
    path: '/jobs/:id/approve-previews',
    summary:
      'Give "go" to a job rendered with approvePreviews: the frames after its previews render (a repeat answers ' +
      'the job as it is)',
    ...jobRoute,
    responses: { 200: JobEnvelope },
    errors: ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED', 'PREVIEW_APPROVAL_NOT_PENDING'],
    extension: 'scheduling',
    retrySafe: true,
  },
} as const satisfies Record<string, RouteDef>;
