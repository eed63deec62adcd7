// The daemon follows edits of config.toml without a restart: GET /health shows the new service
// URL and profile; a broken edit is logged with its reason and the last good config is kept.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../daemon/config.js';
import { Health } from '../../shared/daemon/api.js';
import { waitUntil } from '../helpers/e2e.js';
import { rawRequest, startTestDaemon, type TestDaemon } from './harness.js';

let td: TestDaemon | undefined;
let root: string;
afterEach(async () => {
  await td?.close();
  td = undefined;
  await rm(root, { recursive: true, force: true });
});

async function health(t: TestDaemon): Promise<Health> {
  const res = await rawRequest(`${t.daemon.origin}/health`, { headers: { authorization: `Bearer ${t.daemon.token}` } });
  return Health.parse(res.json);
}

describe('config.toml followed by the daemon', () => {
  it('applies a new serviceUrl and profile to the next request; a broken edit keeps the last good config', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'rb-follow-'));
    const env = { XDG_CONFIG_HOME: path.join(root, 'config') };
    const file = path.join(root, 'config', 'renderbridge', 'config.toml');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '[profiles.default]\nserviceUrl = "http://127.0.0.2:8420"\n');
    const overrides = { port: 0, stateDir: path.join(root, 'state') };
    const reloadConfig = () => loadDaemonConfig(env, {}, undefined, overrides);
    const config = reloadConfig();
    expect(config).toMatchObject({
      serviceUrl: 'http://127.0.0.2:8420/api/external/v1',
      profile: 'default',
      configFile: file,
    });
    td = await startTestDaemon(config, { reloadConfig, apiKey: 'rb_live_x' });
    expect(await health(td)).toMatchObject({ serviceUrl: 'http://127.0.0.2:8420/api/external/v1', profile: 'default' });

    await writeFile(file, 'defaultProfile = "studio"\n[profiles.studio]\nserviceUrl = "http://farm-b:8420"\n');
    await waitUntil(
      'the new serviceUrl',
      async () => (await health(td!)).serviceUrl === 'http://farm-b:8420/api/external/v1',
      { timeoutMs: 10_000 },
    );
    expect((await health(td)).profile).toBe('studio');

    await writeFile(file, 'defaultProfile = "studio"\n[profiles.studio]\nserviceUrl = "farm-c"\n');
    await waitUntil('the warning', () => td!.logs.some((l) => l.includes('config.toml edit not applied')), {
      timeoutMs: 10_000,
    });
    const warned = td.logs.find((l) => l.includes('config.toml edit not applied'))!;
    expect(warned).toContain('profiles.studio.serviceUrl');
    expect(await health(td)).toMatchObject({ serviceUrl: 'http://farm-b:8420/api/external/v1', profile: 'studio' });
  });
});
