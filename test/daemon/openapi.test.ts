// The daemon's OpenAPI document (shared/daemon/openapi.json): valid OpenAPI 3.1, every route of
// DAEMON_ROUTES in it with its success status, and the committed file up to date.
import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { DAEMON_EVENTS, DAEMON_ROUTES } from '../../shared/daemon/api.js';
import { DAEMON_ERRORS } from '../../shared/daemon/errors.js';
import { buildDaemonOpenApiDocument, DAEMON_ROUTE_ERRORS, openApiPath } from '../../shared/daemon/openapi.js';

type Operation = {
  operationId: string;
  responses: Record<string, { description: string; content?: Record<string, unknown> }>;
  'x-events'?: Record<string, unknown>;
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

const doc = JSON.parse(JSON.stringify(buildDaemonOpenApiDocument())) as Doc;

describe('daemon OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document listing every daemon route with its status and errors', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [name, route] of Object.entries(DAEMON_ROUTES)) {
      const op = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(op?.operationId, `${route.method} ${route.path}`).toBe(name);
      expect(op?.responses[String(route.status)], `${name} ${route.status}`).toBeDefined();
      for (const e of [...DAEMON_ROUTE_ERRORS[name as keyof typeof DAEMON_ROUTES], 'DAEMON_UNAUTHORIZED' as const]) {
        expect(op?.responses[String(DAEMON_ERRORS[e].status)]?.description, `${name} ${e}`).toContain(e);
      }
    }
  });

  it('describes GET /events as text/event-stream with every event and the schema of its data', () => {
    const op = doc.paths['/events']!.get!;
    expect(Object.keys(op.responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(Object.keys(op['x-events']!).sort()).toEqual(Object.keys(DAEMON_EVENTS).sort());
    for (const schema of Object.values(op['x-events']!))
      expect(schema).toMatchObject({ $ref: expect.stringMatching(/^#\/components\/schemas\//) });
  });

  it(
    'matches the committed shared/daemon/openapi.json (run `npm run openapi` after changing the daemon ' + 'contract)',
    async () => {
      const committed = JSON.parse(
        await readFile(new URL('../../shared/daemon/openapi.json', import.meta.url), 'utf8'),
      ) as unknown;
      expect(doc).toEqual(committed);
    },
  );
});
