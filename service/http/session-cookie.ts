// The dashboard session cookie: its name and attributes, read from and written to headers.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SessionCookie {
  /**
   * `__Host-rb_session` when Secure (the prefix makes browsers refuse it without Secure and Path=/), else `rb_session`.
   */
  name: string;
  secure: boolean;
  /** Max-Age, seconds: the session's absolute lifetime (the server ends idle sessions sooner). */
  maxAgeSeconds: number;
}

/**
 * The cookie is Secure when clients reach the service over https, which it learns from the
 * configured public URL (behind a TLS proxy the service itself only sees plain HTTP, and a
 * client-sent X-Forwarded-Proto cannot be trusted without knowing the proxy).
 */
export function sessionCookie(publicUrl: string | undefined, maxAgeSeconds: number): SessionCookie {
  const secure = publicUrl?.toLowerCase().startsWith('https:') ?? false;
  return {
    name: secure ? '__Host-rb_session' : 'rb_session',
    secure,
    maxAgeSeconds: Math.max(1, Math.floor(maxAgeSeconds)),
  };
}

/** The session id the request's Cookie header carries under `name`, if any (the first one). */
export function readSessionCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    // Ids are base64url: anything else is no session of ours (and never reaches the database).
    return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
  }
  return undefined;
}

function attributes(c: SessionCookie, maxAge: number): string {
  return ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAge}`, ...(c.secure ? ['Secure'] : [])].join('; ');
}

export function setSessionCookie(reply: FastifyReply, c: SessionCookie, id: string): void {
  void reply.header('set-cookie', `${c.name}=${id}; ${attributes(c, c.maxAgeSeconds)}`);
}

export function clearSessionCookie(reply: FastifyReply, c: SessionCookie): void {
  void reply.header('set-cookie', `${c.name}=; ${attributes(c, 0)}`);
}
