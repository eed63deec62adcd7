// Generators of hostile HTTP input (fast-check) shared by the service's and the daemon's sweeps:
// JSON and non-JSON bodies, near-valid bodies with one field spoiled, ids, query strings and
// content types a careless or hostile client might send.
import fc from 'fast-check';
import { routePath } from '../../shared/routes.js';

export const jsonText = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));

/** One field of a valid body (or a new one) replaced by anything JSON can carry. */
export function nearValid(valid: Record<string, unknown>): fc.Arbitrary<string> {
  const paths: string[][] = [];
  const walk = (v: unknown, at: string[]) => {
    paths.push(at);
    if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...at, k]);
  };
  walk(valid, []);
  const spoil = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(
      null,
      -1,
      0,
      1e308,
      -0.5,
      '',
      ' ',
      '../../etc/passwd',
      'a'.repeat(5000),
      '\u0000',
      '1-999999999999',
      '1-3x0',
      '0-0',
      [],
      {},
      true,
    ),
  );
  return fc
    .tuple(fc.constantFrom(...paths), fc.option(fc.string({ maxLength: 12 }), { nil: undefined }), spoil)
    .map(([at, extraKey, value]) => {
      const copy = structuredClone(valid);
      const keys = extraKey !== undefined ? [...at, extraKey] : at;
      if (keys.length === 0) return JSON.stringify(value);
      let node: Record<string, unknown> = copy;
      for (const k of keys.slice(0, -1)) {
        const next = node[k];
        if (!next || typeof next !== 'object') return JSON.stringify(copy);
        node = next as Record<string, unknown>;
      }
      const last = keys.at(-1)!;
      // In an array only a small index is a field; other keys (`length`...) add an element.
      if (Array.isArray(node) && !/^\d$/.test(last)) (node as unknown[]).push(value);
      else node[last] = value;
      return JSON.stringify(copy);
    });
}

/** Bodies: none, JSON of any shape, plain text, broken or oversized JSON, and near-valid ones. */
export function bodyArb(
  valid: Record<string, unknown> | undefined,
  bodyLimit: number,
): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 1 },
    { arbitrary: jsonText, weight: 3 },
    { arbitrary: fc.string({ maxLength: 200 }), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        '{',
        '{"a":',
        `${'['.repeat(3000)}`,
        `${'{"a":'.repeat(400)}1${'}'.repeat(400)}`,
        'x'.repeat(bodyLimit + 1),
        '\uFEFF{}',
      ),
      weight: 1,
    },
    ...(valid ? [{ arbitrary: nearValid(valid), weight: 6 }] : []),
  );
}

/** Ids starting with this go into the path as they are, not percent-encoded (e.g. a stray `%`). */
export const RAW = 'RAW:';

/** Path ids: UUIDs, any text, tricky words, raw broken escapes, plus the `extra` names a test resolves itself. */
export function idArb(...extra: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.uuid(),
    fc.string({ maxLength: 60 }),
    fc.constantFrom(
      '..',
      '%2e%2e',
      '.x',
      '..%2f..',
      'progress',
      ' ',
      '😀',
      'a'.repeat(3000),
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ),
    fc.constantFrom(...['%', '%zz', '%E0%A4%A', '%C0%AF', 'a%00b', '%ff'].map((r) => RAW + r)),
    ...extra.map((e) => fc.constant(e)),
  );
}

/**
 * `path` with its `:id` filled. A `.` or `..` segment (also as %2e) is resolved by the client's
 * URL parser before anything is sent, so it would test another route: it becomes a plain word.
 */
export function pathWithId(path: string, id: string): string {
  // An upload's path names its slug (GET /uploads/:slug); hostile ids go there as they go in a job's.
  if (id.startsWith(RAW)) return path.replace(/:(id|slug)\b/, id.slice(RAW.length));
  const value = /^(\.|%2e){1,2}$/i.test(id) ? `${id}x` : id;
  return routePath(path, { id: value, slug: value });
}

export const queryArb = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom('page', 'pageSize', 'status', 'id', '__proto__', 'constructor'),
          fc.string({ maxLength: 10 }),
        ),
        fc.oneof(
          fc.constantFrom(
            '',
            '0',
            '-1',
            '1',
            '100',
            '101',
            '1e3',
            '2.5',
            'NaN',
            'completed',
            'COMPLETED',
            '9'.repeat(400),
          ),
          fc.string({ maxLength: 20 }),
        ),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => `?${new URLSearchParams(pairs).toString()}`),
  fc.constantFrom('?', '?&&', '?page', '?page=1&page=2', '?pageSize[]=1', '?%zz=1', '?status=completed&status=failed'),
);

export const contentTypeArb = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  undefined,
);

export interface Seen {
  status: number;
  body: unknown;
  ms: number;
}

/** Sends one request with a hang limit; the body is parsed as JSON when it is JSON. */
export async function sendRaw(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | undefined; timeoutMs: number },
): Promise<Seen> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: init.method,
    headers: init.headers,
    signal: AbortSignal.timeout(init.timeoutMs),
    ...(init.body !== undefined && init.method !== 'GET' ? { body: init.body } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the caller's checks say so
  }
  return { status: res.status, body, ms: performance.now() - t0 };
}
