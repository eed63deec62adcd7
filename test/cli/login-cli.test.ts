// `renderbridge login`, `logout` and `status` as real processes with a fresh HOME, a private
// gnome-keyring read back with secret-tool, and the real service: the key is checked, stored
// under the profile's keychain entry and nowhere else; today's single entry is still found for
// the default profile; with no keychain, login refuses.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { missingKeyringTools, startKeyringSession, type KeyringSession } from '../electron/keyring.js';
import { runCli } from '../helpers/cli-run.js';
import { startTestService, type TestService } from '../helpers/service.js';

const missing = missingKeyringTools();
let keyring: KeyringSession;
let svc: TestService;
let home: string;

beforeAll(async () => {
  if (missing.length) return;
  keyring = await startKeyringSession();
  svc = await startTestService();
  home = await mkdtemp(path.join(tmpdir(), 'rb-login-home-'));
}, 120_000);
afterAll(async () => {
  if (missing.length) return;
  await svc.close();
  await keyring.close();
  await rm(home, { recursive: true, force: true });
});

const cli = (args: string[], stdin?: string, extra: Record<string, string> = {}) =>
  runCli(args, { HOME: home, DBUS_SESSION_BUS_ADDRESS: keyring.address, ...extra }, stdin);

async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    if ((await readFile(file, 'utf8')).includes(needle)) hits.push(file);
  }
  return hits;
}

describe.skipIf(missing.length > 0)('renderbridge login, logout, status', { timeout: 120_000 }, () => {
  it("finds today's single keychain entry for the default profile", async () => {
    // Stored as the tray app of earlier versions stored it: through keytar, whose entries carry its schema.
    const stored = spawnSync(
      'secret-tool',
      [
        'store',
        '--label=renderbridge',
        'xdg:schema',
        'org.freedesktop.Secret.Generic',
        'service',
        'renderbridge',
        'account',
        'api-key',
      ],
      {
        input: svc.apiKey,
        env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: keyring.address },
      },
    );
    expect(stored.status).toBe(0);
    const r = await cli(['status', '--json'], undefined, { RENDERBRIDGE_SERVICE_URL: svc.origin });
    expect(r.code, r.stdout + r.stderr).toBe(EXIT.OK);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      ok: true,
      profile: { value: 'default', source: 'default' },
      serviceUrl: { value: svc.baseUrl, source: 'env RENDERBRIDGE_SERVICE_URL' },
      key: { present: true, source: 'keychain', keychainEntry: { service: 'renderbridge', account: 'api-key' } },
      daemon: { running: false },
    });
    expect(typeof doc.blender.found).toBe('boolean');
    // The flag beats the variable, and says so.
    const flagged = JSON.parse(
      (
        await cli(['status', '--json', '--service', 'http://127.0.0.3:1'], undefined, {
          RENDERBRIDGE_SERVICE_URL: svc.origin,
        })
      ).stdout,
    );
    expect(flagged.serviceUrl).toEqual({ value: 'http://127.0.0.3:1/api/external/v1', source: 'flag --service' });
  });

  it(
    'login checks the key with the service, stores it under the profile and never on disk; a refused key is ' +
      'not stored',
    async () => {
      const refused = await cli(
        ['login', '--profile', 'studio', '--service', svc.origin, '--json'],
        'rb_live_not-a-key',
      );
      expect(refused.code).toBe(EXIT.AUTH);
      expect(keyring.lookup('renderbridge', 'api-key:studio')).toBeNull();

      const key = await svc.createApiKey('studio-ws');
      const r = await cli(['login', '--profile', 'studio', '--service', svc.origin, '--json'], `${key}\n`);
      expect(r.code, r.stderr).toBe(EXIT.OK);
      expect(JSON.parse(r.stdout)).toEqual({
        ok: true,
        profile: 'studio',
        serviceUrl: svc.baseUrl,
        keychain: { service: 'renderbridge', account: 'api-key:studio' },
      });
      expect(keyring.lookup('renderbridge', 'api-key:studio')).toBe(key);
      expect(keyring.lookup('renderbridge', 'api-key')).toBe(svc.apiKey);
      const toml = await readFile(path.join(home, '.config', 'renderbridge', 'config.toml'), 'utf8');
      expect(toml).toContain('[profiles.studio]');
      expect(await filesContaining(home, key)).toEqual([]);

      const status = JSON.parse((await cli(['status', '--json', '--profile', 'studio'])).stdout);
      expect(status.serviceUrl.source).toBe(
        `profile "studio" in ${path.join(home, '.config', 'renderbridge', 'config.toml')}`,
      );
      expect(status.key).toMatchObject({
        present: true,
        source: 'keychain',
        keychainEntry: { account: 'api-key:studio' },
      });
    },
  );

  it('logout removes only that profile’s entry', async () => {
    const r = await cli(['logout', '--profile', 'studio', '--json']);
    expect(r.code).toBe(EXIT.OK);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, profile: 'studio', removed: true });
    expect(keyring.lookup('renderbridge', 'api-key:studio')).toBeNull();
    expect(keyring.lookup('renderbridge', 'api-key')).toBe(svc.apiKey);
    const status = await cli(['status', '--json', '--profile', 'studio']);
    expect(status.code).toBe(EXIT.AUTH);
    expect(JSON.parse(status.stdout).key.present).toBe(false);
  });

  it('refuses when no keychain answers, before reading the key, and writes it nowhere', async () => {
    const r = await cli(['login', '--service', svc.origin], 'rb_live_secret-never-stored', {
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
    });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain('no OS keychain answers, so the key was not stored');
    expect(await filesContaining(home, 'rb_live_secret-never-stored')).toEqual([]);
  });
});
