// The scheduling extension's reads of the queue for people (the dashboard's farm share view and a
// job's queue ahead). Part of ROUTES (routes.ts).
import { FarmShare, QueueAheadEnvelope } from './api/farm-share.js';
import type { RouteDef } from './routes.js';
import { JOB_ERRORS, JOB_PARAMS, routesOfExtension } from './route-builder.js';

export const FARM_SHARE_ROUTES = routesOfExtension('scheduling', {
  getJobQueueAhead: {
    method: 'GET',
    path: '/jobs/:id/queue-ahead',
    summary:
      "What is claimed before the job's next frame if nothing new comes: frames and jobs ahead in the claim " +
      'order, and the expected wait from measured frame times and the live render slots',
    ...JOB_PARAMS,
    responses: { 200: QueueAheadEnvelope },
    errors: JOB_ERRORS,
  },
  getFarmShare: {
    method: 'GET',
    path: '/farm/share',
    summary:
      "How the farm's render slots are shared now: per workspace (the caller's submitters one by one, other " +
      'workspaces unnamed) its weight, entitled share, current share of busy slots and frames waiting',
    responses: { 200: FarmShare },
    errors: [],
  },
}) satisfies Record<string, RouteDef>;
