// What the route tables share, so that adding an extension's route is its path, summary, schemas
// and the errors that only it answers. The lists keep their order: the OpenAPI document names the
// errors of a status in the order the route lists them.
import { JobIdParams } from './api/job.js';
import type { ExtensionName } from './extensions.js';
import type { RouteDef } from './routes.js';

/** A route under /jobs/:id. */
export const JOB_PARAMS = { params: JobIdParams } as const;

/** A route that reads a JSON body: it may fail its schema, not parse, or come as another media type. */
export const BODY_ERRORS = ['VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE'] as const;

/** A route under /jobs/:id without a body: a malformed id, or no such job in the workspace. */
export const JOB_ERRORS = ['VALIDATION_ERROR', 'JOB_NOT_FOUND'] as const;

/** A route as its extension's table lists it: the extension is named once, for the whole table. */
export type ExtensionRouteDef = Omit<RouteDef, 'extension'>;

export type ExtensionRoutes<E extends ExtensionName, R> = {
  readonly [N in keyof R]: R[N] & { readonly extension: E };
};

/**
 * Marks each route of `routes` as `extension`'s. The literal types are kept (`const`), since the
 * client and the service read each route's body and responses from its type.
 */
export function routesOfExtension<
  const E extends ExtensionName,
  const R extends Readonly<Record<string, ExtensionRouteDef>>,
>(extension: E, routes: R): ExtensionRoutes<E, R> {
  return Object.fromEntries(
    Object.entries(routes).map(([name, route]) => [name, { ...route, extension }]),
  ) as ExtensionRoutes<E, R>;
}
