import { z } from 'zod';

/** Identifiers of jobs, users, workspaces and projects (spec: UUID strings). */
export const Uuid = z.uuid();
/** ISO 8601 date-time; the service always emits UTC with a `Z`, but accepts offsets from peers. */
export const DateTime = z.iso.datetime({ offset: true });
/** Absolute http(s) URL. */
export const Url = z.url({ protocol: /^https?$/ });

export const Pagination = z
  .object({
    page: z.int().min(1),
    pageSize: z.int().min(1).max(100),
    total: z.int().min(0),
    totalPages: z.int().min(0),
  })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof Pagination>;
