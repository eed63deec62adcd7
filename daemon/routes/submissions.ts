// POST /submissions starts a submission (pack -> upload -> create -> validate -> render) and
// answers 202 with its first state; progress follows as `submission` events. GET lists them.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { DaemonError } from '../errors.js';
import type { Submissions } from '../ports.js';

export interface SubmissionRouteDeps {
  submissions: Submissions;
}

const IdParams = z.strictObject({ id: z.string().min(1).max(200) });

export const submissionRoutes: FastifyPluginAsyncZod<SubmissionRouteDeps> = async (app, deps) => {
  const submit = DAEMON_ROUTES.submit;
  app.post(
    submit.path,
    { schema: { body: submit.body, response: { [submit.status]: submit.response } } },
    async (req, reply) => {
      return reply.code(submit.status).send(deps.submissions.start(req.body));
    },
  );

  const list = DAEMON_ROUTES.listSubmissions;
  app.get(list.path, { schema: { response: { 200: list.response } } }, async () => ({
    submissions: deps.submissions.list(),
  }));

  const get = DAEMON_ROUTES.getSubmission;
  app.get(get.path, { schema: { params: IdParams, response: { 200: get.response } } }, async (req) => {
    const found = deps.submissions.get(req.params.id);
    if (!found)
      throw new DaemonError('DAEMON_NOT_FOUND', `No submission ${req.params.id}: list them with GET /submissions.`, {
        submissionId: req.params.id,
      });
    return found;
  });
};
