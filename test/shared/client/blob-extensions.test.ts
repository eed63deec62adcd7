// How the client learns whether a service offers the content-addressed upload: the real service
// with the extension on and off, and a scripted spec-only server (real HTTP) whose 404 is an HTML
// page from a proxy rather than the registry's body. Asked once per client.
import { afterEach, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import { ApiError } from '../../../shared/client/errors.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { errorBody, sendJson, startServer, type TestServer } from './fixture.js';

let svc: TestService | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  await svc?.close();
  await server?.close();
  svc = undefined;
  server = undefined;
});

describe('RenderJobClient.extensions', () => {
  it('lists content-addressed-uploads version 1 on the reference service, and not when it is turned off', async () => {
    svc = await startTestService();
    const on = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    expect((await on.extensions()).map((e) => [e.name, e.version])).toContainEqual(['content-addressed-uploads', 1]);
    expect(await on.hasExtension('content-addressed-uploads')).toBe(true);
    await svc.close();

    svc = await startTestService({ blobUploads: false });
    const off = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    expect((await off.extensions()).map((e) => e.name)).not.toContain('content-addressed-uploads');
    expect(await off.hasExtension('content-addressed-uploads')).toBe(false);
  });

  it('takes any 404 of a spec-only service for none, and asks once per client', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>404 Not Found</body></html>');
    });
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_test' });
    expect(await client.extensions()).toEqual([]);
    expect(await client.hasExtension('content-addressed-uploads')).toBe(false);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/external/v1/extensions']);
  });

  it('does not keep a refusal: a 401 is thrown, and the next call asks again', async () => {
    let calls = 0;
    server = await startServer((_req, res) => {
      calls++;
      if (calls === 1) sendJson(res, 401, errorBody('UNAUTHORIZED', 'Missing or invalid API key.'));
      else sendJson(res, 200, { data: { extensions: [] } });
    });
    const client = new RenderJobClient({ baseUrl: server.baseUrl, apiKey: 'rb_live_test' });
    const err = await client.extensions().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect(await client.extensions()).toEqual([]);
    expect(calls).toBe(2);
  });
});
