// The scheduling extension's routes: change a job's priority, pause and resume it, and give "go"
// to the rest of its frames once its previews are approved. Part of ROUTES (routes.ts).
import { JobEnvelope } from './api/job.js';
import { SetPriorityBody } from './api/scheduling.js';
import type { RouteDef } from './routes.js';
import { BODY_ERRORS, JOB_PARAMS, routesOfExtension } from './route-builder.js';

/** A job that has finished cannot be re-prioritised, paused, resumed or approved. */
const UNFINISHED_JOB_ERRORS = ['VALIDATION_ERROR', 'JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED'] as const;

export const SCHEDULING_ROUTES = routesOfExtension('scheduling', {
  setJobPriority: {
    method: 'POST',
    path: '/jobs/:id/priority',
    summary:
      "Change an unfinished job's priority (0-100, higher claimed first): its frames not claimed yet follow " +
      'the new one; running frames finish',
    ...JOB_PARAMS,
    body: SetPriorityBody,
    responses: { 200: JobEnvelope },
    errors: [...BODY_ERRORS, 'JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED'],
    retrySafe: true,
  },
  pauseJob: {
    method: 'POST',
    path: '/jobs/:id/pause',
    summary: 'Pause an unfinished job: no new frame of it is claimed until resume; running frames finish',
    ...JOB_PARAMS,
    responses: { 200: JobEnvelope },
    errors: UNFINISHED_JOB_ERRORS,
    retrySafe: true,
  },
  resumeJob: {
    method: 'POST',
    path: '/jobs/:id/resume',
    summary: 'Resume a paused job: its frames are claimed again (a job not paused answers as it is)',
    ...JOB_PARAMS,
    responses: { 200: JobEnvelope },
    errors: UNFINISHED_JOB_ERRORS,
    retrySafe: true,
  },
  approvePreviews: {
    method: 'POST',
    path: '/jobs/:id/approve-previews',
    summary:
      'Give "go" to a job rendered with approvePreviews: the frames after its previews render (a repeat answers ' +
      'the job as it is)',
    ...JOB_PARAMS,
    responses: { 200: JobEnvelope },
    errors: [...UNFINISHED_JOB_ERRORS, 'PREVIEW_APPROVAL_NOT_PENDING'],
    retrySafe: true,
  },
}) satisfies Record<string, RouteDef>;
