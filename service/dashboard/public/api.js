// Calls of the service's API from the dashboard: same origin, the session cookie (HttpOnly, so
// never visible here) authenticates, and every request that is not GET carries the session's
// CSRF token, which lives in this module's memory only.
export const API = '/api/external/v1';

let csrfToken = null;

export function setCsrfToken(token) {
  csrfToken = token;
}

/** An answer that was not 2xx, with the service's error body (name, message, metadata). */
export class ApiFailure extends Error {
  constructor(status, body) {
    super((body && body.message) || `The service answered ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiFailure(res.status, data);
  return data;
}
