// Small fetch wrappers for API tests: they speak raw HTTP so tests see exactly what clients see.
import { ErrorBody } from '../../shared/api/error-body.js';

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export function api(baseUrl: string, apiKey: string | undefined) {
  return async function call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    extra: { headers?: Record<string, string>; raw?: string } = {},
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...extra.headers };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    let payload: string | undefined;
    if (extra.raw !== undefined) payload = extra.raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
}

/** Asserts the spec's error body shape and returns it typed. */
export function errorBody(a: Answer): ErrorBody {
  return ErrorBody.parse(a.body);
}
