// The add-on's daemon client (host-addon/renderbridge/daemon_client.py) against the daemon's API
// document (shared/daemon/openapi.json): contract_calls.py makes every call the client can make,
// with the bodies the add-on builds, at a recording server. Not a fake daemon: a real HTTP server
// that only records each request and answers the smallest body the document allows for that route.
// Each request must match a route (method + path template, path parameters valid), carry the
// bearer token and no Origin, and its JSON body must validate against the route's requestBody
// schema (ajv, JSON Schema 2020-12). The reverse holds too: every call written in
// daemon_client.py is in the document, and the script exercised every one of them.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./contract_calls.py', import.meta.url));
const CLIENT = fileURLToPath(new URL('../../host-addon/renderbridge/daemon_client.py', import.meta.url));
const TOKEN = 't'.repeat(43);
const JOB_ID = '6f1c2a4e-0b7d-4c55-9a61-2f3e4d5c6b7a';

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  parameters?: { in: string; name: string; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  route: string | null;
  problems: string[];
}

const doc = JSON.parse(await readFile(new URL('../../shared/daemon/openapi.json', import.meta.url), 'utf8')) as Doc;
// The whole document is one schema resource, so `#/components/schemas/...` refs resolve in it.
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...doc, $id: 'daemon' } as Schema);
const validatorAt = (pointer: string) => ajv.getSchema(`daemon#${pointer}`)!;
const esc = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The route of a request: [template, operation, path parameters], or null. */
function matchRoute(method: string, urlPath: string): [string, Operation, Record<string, string>] | null {
  for (const [template, ops] of Object.entries(doc.paths)) {
    const op = ops[method.toLowerCase()];
    if (!op) continue;
    const names: string[] = [];
    const re = new RegExp(`^${template.replace(/\{(\w+)\}/g, (_m, n: string) => (names.push(n), '([^/]+)'))}$`);
    const m = re.exec(urlPath);
    if (m) return [template, op, Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]))];
  }
  return null;
}

/** The smallest instance of `schema` (nulls where allowed, empty arrays, required properties only). */
function minimal(schema: Schema): unknown {
  if (typeof schema.$ref === 'string') return minimal(doc.components.schemas[schema.$ref.split('/').pop()!]!);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const choices = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (choices) return minimal(choices.find((c) => c.type === 'null') ?? choices[0]!);
  const type = Array.isArray(schema.type) ? (schema.type.includes('null') ? 'null' : schema.type[0]) : schema.type;
  if (type === 'null') return null;
  if (type === 'boolean') return false;
  if (type === 'integer' || type === 'number') return Math.max(0, Number(schema.minimum ?? 0));
  if (type === 'array')
    return Array.from({ length: Number(schema.minItems ?? 0) }, () => minimal(schema.items as Schema));
  if (type === 'string') {
    if (schema.format === 'uuid') return JOB_ID;
    if (schema.format === 'date-time') return '2024-01-01T00:00:00Z';
    return 'x'.repeat(Number(schema.minLength ?? 1));
  }
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.fromEntries(((schema.required ?? []) as string[]).map((k) => [k, minimal(props[k]!)]));
}

function check(req: Recorded): { status: number; answer: unknown } {
  const found = matchRoute(req.method, req.path);
  if (!found) {
    req.problems.push('no such route in the document');
    return {
      status: 404,
      answer: { name: 'DAEMON_NOT_FOUND', message: 'not in the document', details: [], type: 'api', metadata: {} },
    };
  }
  const [template, op, params] = found;
  req.route = `${req.method} ${template}`;
  const opPointer = `/paths/${esc(template)}/${req.method.toLowerCase()}`;
  for (const p of op.parameters ?? []) {
    const i = op.parameters!.indexOf(p);
    const v = validatorAt(`${opPointer}/parameters/${i}/schema`);
    if (!v(params[p.name])) req.problems.push(`path parameter ${p.name}: ${ajv.errorsText(v.errors)}`);
  }
  if (req.headers.authorization !== `Bearer ${TOKEN}`) req.problems.push('no bearer token');
  if (req.headers.origin !== undefined) req.problems.push('sent an Origin header (the daemon refuses it)');
  if (req.body !== undefined) {
    if (!op.requestBody) req.problems.push('sent a body to a route that takes none');
    else if (!String(req.headers['content-type']).startsWith('application/json'))
      req.problems.push('body without Content-Type: application/json');
    else {
      const v = validatorAt(`${opPointer}/requestBody/content/application~1json/schema`);
      if (!v(req.body)) req.problems.push(`body: ${ajv.errorsText(v.errors)}`);
    }
  } else if (op.requestBody?.required) req.problems.push('no body, but the route requires one');
  const [status, response] = Object.entries(op.responses).find(([s]) => s.startsWith('2'))!;
  const answer = minimal(response.content!['application/json']!.schema);
  const valid = validatorAt(`${opPointer}/responses/${status}/content/application~1json/schema`);
  // The recording server's own answer must follow the document too, or the test proves nothing.
  expect(valid(answer), `${req.route} answer: ${ajv.errorsText(valid.errors)}`).toBe(true);
  return { status: Number(status), answer };
}

let server: Server;
let work: string;
const recorded: Recorded[] = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-addon-contract-'));
  for (const f of ['tiles/a.1001.png', 'tiles/a.1002.png', 'seq/f_0001.png', 'seq/f_0002.png']) {
    await mkdir(path.dirname(path.join(work, f)), { recursive: true });
    await writeFile(path.join(work, f), 'x');
  }
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const rec: Recorded = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: undefined,
        route: null,
        problems: [],
      };
      try {
        rec.body = raw ? JSON.parse(raw) : undefined;
      } catch {
        rec.problems.push('body is not JSON');
      }
      recorded.push(rec);
      let out: { status: number; answer: unknown };
      try {
        out = check(rec);
      } catch (err) {
        rec.problems.push(String(err));
        out = {
          status: 500,
          answer: { name: 'DAEMON_INTERNAL_ERROR', message: String(err), details: [], type: 'api', metadata: {} },
        };
      }
      res.writeHead(out.status, { 'content-type': 'application/json' }).end(JSON.stringify(out.answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  if (work) await rm(work, { recursive: true, force: true });
});

/** Every `self.request('METHOD', path...)` written in daemon_client.py, as `METHOD /template`. */
async function callsInClient(): Promise<string[]> {
  const source = await readFile(CLIENT, 'utf8');
  const calls = [
    ...source.matchAll(/self\.request\('([A-Z]+)', ('[^,)]*'(?: \+ quote\(\w+, safe=''\)(?: \+ '[^']*')?)?)/g),
  ];
  return calls.map(
    ([, method, expr]) =>
      `${method} ${expr!.replace(/' \+ quote\(\w+, safe=''\)(?: \+ ')?/g, '{id}').replace(/'/g, '')}`,
  );
}

describe('the add-on daemon client against shared/daemon/openapi.json', () => {
  it('sends only documented requests, with bodies that validate against their route schemas', async () => {
    const state = path.join(work, 'daemon.json');
    const port = (server.address() as AddressInfo).port;
    await writeFile(
      state,
      JSON.stringify({
        version: 1,
        pid: process.pid,
        port,
        token: TOKEN,
        startedAt: new Date().toISOString(),
        daemonVersion: 'x',
      }),
    );
    const { stdout } = await run('python3', [SCRIPT, state, work, JOB_ID], { timeout: 60_000 }).catch(
      (err: { stderr?: string; stdout?: string }) => {
        throw new Error(
          `contract_calls.py failed:\n${err.stdout ?? ''}${err.stderr ?? ''}\nrequests: ` +
            `${JSON.stringify(recorded, null, 2)}`,
        );
      },
    );
    expect(JSON.parse(stdout)).toHaveLength(18);
    expect(recorded).toHaveLength(18);
    for (const r of recorded) expect(r.problems, `${r.method} ${r.path} ${JSON.stringify(r.body)}`).toEqual([]);
    // The bodies really are the add-on's: the collector's dependencies and submit_body's settings.
    const pack = recorded.find(
      (r) => r.route === 'POST /packs' && (r.body as { dependencies?: unknown[] }).dependencies?.length,
    );
    expect((pack?.body as { dependencies: { pattern: string }[] }).dependencies.map((d) => d.pattern)).toEqual([
      'file',
      'udim',
      'sequence',
      'directory',
      'file',
    ]);
    const modes = recorded.filter((r) => r.route === 'POST /submissions').map((r) => (r.body as { mode: string }).mode);
    expect(modes).toEqual(['render', 'check', 'render', 'estimate', 'render']);
    // Every call written in the client was made (so none escapes the checks above).
    expect(new Set(recorded.map((r) => r.route))).toEqual(new Set(await callsInClient()));
  });

  it('uses only routes in the document in every call written in daemon_client.py', async () => {
    const calls = await callsInClient();
    expect(calls).toHaveLength(12);
    for (const c of calls) {
      const [method, template] = c.split(' ') as [string, string];
      expect(doc.paths[template]?.[method.toLowerCase()], c).toBeDefined();
    }
  });
});
