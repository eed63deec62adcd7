// POST /pack: packs a .blend, a folder or a zip through the Packer port and answers the result
// (zip, preflight, missing files, remaps). The pack is aborted when the caller disconnects.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import type { Packer } from '../ports.js';

export interface PackRouteDeps {
  packer: Packer;
}

export const packRoutes: FastifyPluginAsyncZod<PackRouteDeps> = async (app, deps) => {
  const route = DAEMON_ROUTES.pack;
  app.post(route.path, { schema: { body: route.body, response: { 200: route.response } } }, async (req) => {
    const abort = new AbortController();
    const onClose = (): void => abort.abort(new Error('the caller went away'));
    req.raw.socket.on('close', onClose);
    try {
      return await deps.packer.pack(req.body, { signal: abort.signal });
    } finally {
      req.raw.socket.off('close', onClose);
    }
  });
};
