// GET /extensions: which extensions of the v1 API this service offers, so a client can tell
// before using one. Always registered (it is how this service is discovered); lists none when
// every extension is turned off.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { EXTENSION_SUMMARIES, type Extension, type ExtensionName } from '../../shared/extensions.js';
import { ROUTES, type RouteDef } from '../../shared/routes.js';

/** The version of each extension this service speaks (bumped on an incompatible change). */
const VERSIONS: Readonly<Record<ExtensionName, number>> = {
  'content-addressed-uploads': 1,
  'resumable-uploads': 1,
  'dashboard-sessions': 1,
  'job-events': 1,
  'job-tasks': 1,
  workers: 1,
  'job-requeue': 1,
  'task-logs': 1,
  'frame-stats': 1,
  estimate: 1,
  'frame-thumbnails': 1,
  scheduling: 1,
};

export const extensionRoutes: FastifyPluginAsyncZod<{ enabled: readonly ExtensionName[] }> = async (app, opts) => {
  const extensions: Extension[] = opts.enabled.map((name) => ({
    name,
    version: VERSIONS[name],
    summary: EXTENSION_SUMMARIES[name],
    routes: Object.entries(ROUTES as Record<string, RouteDef>)
      .filter(([, r]) => r.extension === name)
      .map(([routeName]) => routeName),
  }));
  const body = { data: { extensions } };
  app.get(ROUTES.getExtensions.path, async () => body);
};
