// POST /pack packs while the request waits (kept for scripts; aborted when the caller goes away).
// POST /packs starts a background pack and answers 202 with its first state; GET /packs/:id reads
// it (phase, bytes, rate, ETA, then the result or the error), and `pack` events follow it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { DaemonError } from '../errors.js';
import type { BackgroundPacks, Packer } from '../ports.js';

export interface PackRouteDeps {
  packer: Packer;
  packs: BackgroundPacks;
}

const IdParams = z.strictObject({ id: z.string().min(1).max(200) });

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

  const start = DAEMON_ROUTES.startPack;
  app.post(
    start.path,
    { schema: { body: start.body, response: { [start.status]: start.response } } },
    async (req, reply) => {
      return reply.code(start.status).send(deps.packs.start(req.body));
    },
  );

  const get = DAEMON_ROUTES.getPack;
  app.get(get.path, { schema: { params: IdParams, response: { 200: get.response } } }, async (req) => {
    const found = deps.packs.get(req.params.id);
    if (!found)
      throw new DaemonError(
        'DAEMON_NOT_FOUND',
        `No pack ${req.params.id}: it was submitted, or it expired; start a new one with POST /packs.`,
        { packId: req.params.id },
      );
    return found;
  });
};
