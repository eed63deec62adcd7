// A browser's view of the dashboard API for tests: sign in with a key, then call with the session
// cookie (and the CSRF token where asked), exactly as the page does, over real HTTP.
import { SessionEnvelope, type Session } from '../../../shared/api/dashboard.js';
import { api, type Answer } from '../../helpers/http.js';

export interface SignedIn {
  /** The cookie pair as a browser sends it back (`rb_session=...`). */
  cookie: string;
  /** The Set-Cookie header the sign-in answered. */
  setCookie: string;
  session: Session;
  /** A call with the cookie; `csrf: true` adds the session's X-CSRF-Token. */
  call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts?: { csrf?: boolean | string; headers?: Record<string, string> },
  ): Promise<Answer<T>>;
}

export async function signIn(baseUrl: string, apiKey: string): Promise<SignedIn> {
  const r = await api(baseUrl, undefined)('POST', '/sessions', { apiKey });
  if (r.status !== 201) throw new Error(`sign-in answered ${r.status}: ${JSON.stringify(r.body)}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  const session = SessionEnvelope.parse(r.body).data;
  return {
    cookie,
    setCookie,
    session,
    call: (method, path, body, opts = {}) => {
      const headers: Record<string, string> = { cookie, ...opts.headers };
      if (opts.csrf) headers['x-csrf-token'] = opts.csrf === true ? session.csrfToken : opts.csrf;
      return api(baseUrl, undefined)(method, path, body, { headers });
    },
  };
}
