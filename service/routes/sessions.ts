// Dashboard sign-in and sign-out (extension dashboard-sessions): an API key, sent once, is
// exchanged for a random session id in an HttpOnly, SameSite=Strict cookie; the database keeps
// only the id's hash. The answer carries the session's CSRF token, which every request that is
// not GET must send back (see service/http/session-auth.ts).
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Session } from '../../shared/api/dashboard.js';
import { ROUTES } from '../../shared/routes.js';
import { hashApiKey } from '../domain/api-keys.js';
import { csrfTokenFor, hashSessionId, newSessionId, sessionEndsAt } from '../domain/sessions.js';
import { ApiError } from '../http/api-error.js';
import { checkApiKey } from '../http/auth.js';
import type { SessionAuth } from '../http/session-auth.js';
import { clearSessionCookie, setSessionCookie } from '../http/session-cookie.js';
import type { FoundKey, KeyStore } from '../ports/keys.js';
import type { RateLimiter } from '../ports/rate-limit.js';
import type { FoundSession } from '../ports/sessions.js';

export interface SessionRouteDeps {
  keys: KeyStore;
  limiter: RateLimiter;
  sessions: SessionAuth;
  /** Failed sign-ins per address (service/http/auth-failures.ts). Default none: not limited. */
  failures?: RateLimiter;
}

/** Ended sessions one sign-in deletes on the way, so the table does not grow with abandoned ones. */
const SWEEP_PER_SIGN_IN = 100;

function view(id: string, s: FoundSession, auth: SessionAuth): { data: Session } {
  const { life } = auth.deps;
  return {
    data: {
      csrfToken: csrfTokenFor(id),
      expiresAt: new Date(sessionEndsAt(s, life)).toISOString(),
      maxExpiresAt: new Date(s.expiresAt).toISOString(),
      idleTimeoutSeconds: Math.max(1, Math.round(life.idleMs / 1000)),
      workspace: { id: s.workspaceId, name: s.workspaceName },
    },
  };
}

/** The Bearer key of a request the auth hook already accepted (its budget is charged there). */
async function bearerKey(keys: KeyStore, header: string | undefined): Promise<FoundKey> {
  const key = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  const rec = key ? await keys.findByHash(hashApiKey(key)) : undefined;
  if (!rec || rec.revokedAt) throw new ApiError('UNAUTHORIZED');
  return rec;
}

export const sessionRoutes: FastifyPluginAsyncZod<SessionRouteDeps> = async (app, deps) => {
  const auth = deps.sessions;
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  const create = ROUTES.createSession;
  app.post(
    create.path,
    {
      schema: { body: create.body },
      config: { signIn: true },
      // Signing in with a Bearer key needs no body.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      const rec = req.body.apiKey
        ? await checkApiKey(deps.keys, deps.limiter, req.body.apiKey, reply, deps.failures)
        : req.headers.authorization
          ? await bearerKey(deps.keys, req.headers.authorization)
          : undefined;
      if (!rec)
        throw new ApiError('UNAUTHORIZED', {
          message: 'Sign in with an API key: send {"apiKey": "rb_live_..."} or "Authorization: Bearer <API_KEY>".',
        });
      // Signing in again replaces the session this browser had.
      const previous = auth.idOf(req);
      if (previous) await auth.deps.store.delete(hashSessionId(previous));
      const now = auth.now();
      const { life } = auth.deps;
      await auth.deps.store.deleteEnded(now, now - life.idleMs, SWEEP_PER_SIGN_IN);
      const id = newSessionId();
      const session = {
        idHash: hashSessionId(id),
        keyId: rec.id,
        workspaceId: rec.workspaceId,
        userId: rec.userId,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + life.maxMs,
      };
      await auth.deps.store.create(session);
      setSessionCookie(reply, auth.deps.cookie, id);
      noStore(reply);
      return reply.code(201).send(view(id, { ...session, workspaceName: rec.workspaceName, keyRevoked: false }, auth));
    },
  );

  app.get(ROUTES.getCurrentSession.path, async (req, reply) => {
    const s = req.dashboardSession;
    if (!s) throw new ApiError('SESSION_NOT_FOUND');
    noStore(reply);
    return view(s.id, s.found, auth);
  });

  app.delete(ROUTES.deleteCurrentSession.path, async (req, reply) => {
    const s = req.dashboardSession;
    if (s) await auth.deps.store.delete(hashSessionId(s.id));
    clearSessionCookie(reply, auth.deps.cookie);
    return { data: { ended: !!s } };
  });
};
