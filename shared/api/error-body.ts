import { z } from 'zod';

export const ErrorDetail = z.object({
  code: z.string(),
  path: z.array(z.string()),
  message: z.string(),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

/** Every error response, 4xx and 5xx alike. `type` is `zod` for request validation errors. */
export const ErrorBody = z
  .object({
    message: z.string(),
    name: z.string(),
    details: z.array(ErrorDetail),
    type: z.enum(['zod', 'api']),
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'ErrorBody' });
export type ErrorBody = z.infer<typeof ErrorBody>;
