import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ERROR_NAMES, ERRORS } from '../../../shared/errors.js';
import { buildOpenApiDocument } from '../../../shared/openapi.js';
import { ROUTES } from '../../../shared/routes.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { filesOnly, startTestService, useTestService } from '../../helpers/service.js';

const used = useTestService({ bodyLimitBytes: 4096 });
const { call } = used;

describe('error bodies', () => {
  it('answers an unknown route with 404 ROUTE_NOT_FOUND in the error body', async () => {
    for (const p of ['/nope', '/jobs/abc/def/ghi']) {
      const r = await call('GET', p);
      expect(r.status).toBe(404);
      expect(errorBody(r).name).toBe('ROUTE_NOT_FOUND');
    }
    const outside = await fetch(`${used.svc.origin}/elsewhere`);
    expect(outside.status).toBe(404);
  });

  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const r = await call('POST', '/uploads', undefined, {
      headers: { 'content-type': 'application/json' },
      raw: '{"fileName": "a.zip",',
    });
    expect(r.status).toBe(400);
    expect(errorBody(r).name).toBe('INVALID_JSON');
  });

  it('answers a non-JSON content type with 415', async () => {
    const r = await call('POST', '/uploads', undefined, {
      headers: { 'content-type': 'text/plain' },
      raw: 'fileName=a.zip',
    });
    expect(r.status).toBe(415);
    expect(errorBody(r).name).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers an oversized JSON body with 413', async () => {
    const r = await call('POST', '/jobs', { slug: 'x'.repeat(10_000) });
    expect(r.status).toBe(413);
    expect(errorBody(r).name).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers deeply hostile input without a 500', async () => {
    const job = await createJob(call);
    const nested = `${'{"a":'.repeat(500)}1${'}'.repeat(500)}`;
    const bodies = [
      nested,
      '[]',
      'null',
      '"string"',
      '{"requestedRenderConfig": {"colorManagementPreset": "default", "frameRanges": ["1-99999999999"]}}',
      '\u0000',
    ];
    for (const raw of bodies) {
      const r = await call('POST', `/jobs/${job.id}/render`, undefined, {
        headers: { 'content-type': 'application/json' },
        raw,
      });
      expect(r.status, raw.slice(0, 20)).toBeGreaterThanOrEqual(400);
      expect(r.status, raw.slice(0, 20)).toBeLessThan(500);
      errorBody(r);
    }
  });

  it(
    'refuses text with the NUL character on every stack (PostgreSQL cannot store it), but not an escaped ' +
      'backslash before u0000',
    async () => {
      for (const raw of [
        '{"slug":"a\\u0000"}',
        '{"slug":"\\\\\\u0000"}',
        '{"slug":"x","uploadPreflight":{"k\\u0000":1}}',
      ]) {
        const r = await call('POST', '/jobs', undefined, { headers: { 'content-type': 'application/json' }, raw });
        expect(r.status, raw).toBe(400);
        const body = errorBody(r);
        expect(body.name).toBe('VALIDATION_ERROR');
        expect(body.details[0]).toMatchObject({ code: 'nul_character', path: ['body'] });
      }
      // A backslash followed by the text u0000 is fine: this slug simply does not exist.
      const literal = await call('POST', '/jobs', undefined, {
        headers: { 'content-type': 'application/json' },
        raw: '{"slug":"a\\\\u0000"}',
      });
      expect(errorBody(literal).name).toBe('UPLOAD_NOT_FOUND');
    },
  );

  it('answers a path the router cannot read with 400 VALIDATION_ERROR after checking the key', async () => {
    for (const p of ['/jobs/%zz', '/jobs/%/progress', `/jobs/${'a'.repeat(3000)}`]) {
      const r = await call('GET', p);
      expect(r.status, p).toBe(400);
      const body = errorBody(r);
      expect(body.name, p).toBe('VALIDATION_ERROR');
      expect(body.details[0]?.path, p).toEqual(['params']);
      expect(body.metadata.requestId, p).toBe(r.headers.get('x-request-id'));
      const anonymous = await api(used.svc.baseUrl, undefined)('GET', p);
      expect(anonymous.status, p).toBe(401);
      expect(errorBody(anonymous).name, p).toBe('UNAUTHORIZED');
    }
  });

  it('carries a request id in metadata and the x-request-id header', async () => {
    const r = await call('GET', '/jobs/00000000-0000-4000-8000-000000000000');
    expect(errorBody(r).metadata.requestId).toBe(r.headers.get('x-request-id'));
  });
});

describe('error registry', () => {
  it('gives every error a 4xx/5xx status and a message that says what to do', () => {
    for (const name of ERROR_NAMES) {
      expect(ERRORS[name].status).toBeGreaterThanOrEqual(400);
      expect(ERRORS[name].message.length).toBeGreaterThan(30);
    }
  });

  it('documents every error name in docs/reference/errors.md, "API errors", with its status', async () => {
    const page = await readFile(new URL('../../../docs/reference/errors.md', import.meta.url), 'utf8');
    const start = page.indexOf('\n## API errors\n');
    const end = page.indexOf('\n## Daemon errors\n');
    expect(start, 'the "API errors" section').toBeGreaterThanOrEqual(0);
    expect(end, 'the "Daemon errors" section after it').toBeGreaterThan(start);
    const section = page.slice(start, end);
    for (const name of ERROR_NAMES) {
      expect(section, name).toMatch(new RegExp(`\\|\\s*\`${name}\`\\s*\\|\\s*${ERRORS[name].status}\\s*\\|`));
    }
  });
});

describe('OpenAPI', () => {
  it('serves a valid OpenAPI 3.1 document listing every endpoint', async () => {
    const r = await fetch(`${used.svc.baseUrl}/openapi.json`);
    expect(r.status).toBe(200);
    const doc = (await r.json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, unknown>>;
    };
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.0.1');
    for (const route of Object.values(ROUTES)) {
      const p = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
      expect(doc.paths[p]?.[route.method.toLowerCase()], `${route.method} ${p}`).toBeDefined();
    }
    expect(doc.paths['/{uploadUrl}']?.put).toBeDefined();
  });

  it('matches the committed shared/openapi.json (run `npm run openapi` after changing the contract)', async () => {
    const committed = JSON.parse(
      await readFile(new URL('../../../shared/openapi.json', import.meta.url), 'utf8'),
    ) as unknown;
    expect(JSON.parse(JSON.stringify(buildOpenApiDocument()))).toEqual(committed);
  });
});

describe('internal faults', () => {
  it.skipIf(filesOnly('breaking the storage folder'))(
    'answers a real storage failure with 500 INTERNAL_ERROR, no stack trace, and logs the cause',
    async () => {
      const broken = await startTestService();
      try {
        const c = api(broken.baseUrl, broken.apiKey);
        const t = (await c('POST', '/uploads', { fileName: 'a.blend', fileType: 'blend' })).body as {
          uploadUrl: string;
        };
        // The disk under the service loses its temp folders (a PUT's bytes are written to .partial
        // on file storage, to be resumed): a fault no request can cause.
        const { rm } = await import('node:fs/promises');
        await rm(`${broken.dataDir}/objects/.tmp`, { recursive: true, force: true });
        await rm(`${broken.dataDir}/objects/.partial`, { recursive: true, force: true });
        const r = await fetch(t.uploadUrl, {
          method: 'PUT',
          headers: { 'content-type': 'application/octet-stream' },
          body: 'bytes',
        });
        expect(r.status).toBe(500);
        const text = await r.text();
        const e = errorBody({ status: 500, headers: r.headers, body: JSON.parse(text) });
        expect(e.name).toBe('INTERNAL_ERROR');
        expect(text).not.toMatch(/ENOENT|\.tmp|\.partial|at .*\.ts:\d+/);
        expect(broken.logs.join('')).toContain('ENOENT');
      } finally {
        await broken.close();
      }
    },
  );
});
