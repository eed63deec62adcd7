// The daemon's client waits for a lost connection as long as the reconnectPatience setting says,
// and its log says when the connection came back (issue 30). Real service behind a real proxy that
// goes down and comes back.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiKeyProvider } from '../../daemon/keychain/api-key.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { waitUntil } from '../helpers/e2e.js';
import { startProxiedService, type ProxiedService } from '../helpers/proxied-service.js';

let ps: ProxiedService;
beforeAll(async () => {
  ps = await startProxiedService('files');
}, 60_000);
afterAll(() => ps?.close());

it('logs a connection that dropped and came back, with how long it was down', async () => {
  const lines: { obj: object; msg: string }[] = [];
  const config = defaultDaemonConfig({ RENDERBRIDGE_RECONNECT_PATIENCE: '60' });
  expect(config.reconnectPatience).toBe(60);
  const provider = new ApiKeyProvider({
    serviceUrl: ps.baseUrl,
    keychain: null,
    env: { RENDERBRIDGE_API_KEY: ps.svc.apiKey },
    clientOptions: {
      maxRetries: 1,
      baseDelayMs: 5,
      maxDelayMs: 50,
      reconnectPatienceMs: config.reconnectPatience * 1000,
    },
    logger: { info: (obj, msg) => lines.push({ obj, msg }), warn: (obj, msg) => lines.push({ obj, msg }) },
  });
  const client = await provider.client();
  await client.listJobs({});
  const refused = ps.proxy.refused();
  ps.proxy.linkDown();
  const listing = client.listJobs({});
  await waitUntil('three refused connections', () => ps.proxy.refused() >= refused + 3);
  ps.proxy.linkUp();
  await listing;
  const back = lines.find((l) => l.msg === 'the connection to the service dropped and came back');
  expect(back?.obj).toMatchObject({ method: 'GET', path: '/jobs' });
  expect((back?.obj as { downMs: number }).downMs).toBeGreaterThan(0);
});
