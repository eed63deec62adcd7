// The Settings window's farm logic (electron/core/farm-settings.ts) on what the page does not show
// in settings-window.test.ts: a broken config.toml is reported with its file and line and nothing
// is saved; a bad URL, profile name or folder is refused before any request; the profiles of the
// file are listed with their own keys. Real gnome-keyring (private D-Bus session), real service.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeytarKeychain } from '../../daemon/keychain/keytar.js';
import { FarmSettings } from '../../electron/core/farm-settings.js';
import { KEYCHAIN_SERVICE } from '../../shared/constants.js';
import { keychainEntryFor } from '../../user-config/keychain-entry.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { missingKeyringTools, startKeyringSession, type KeyringSession } from './keyring.js';

const missing = missingKeyringTools();
const suite = missing.length === 0 ? describe : describe.skip;

let keyring: KeyringSession | undefined;
let svc: TestService | undefined;
let root: string;

beforeAll(async () => {
  if (missing.length) return;
  keyring = await startKeyringSession();
  process.env.DBUS_SESSION_BUS_ADDRESS = keyring.address;
  svc = await startTestService();
  root = await mkdtemp(path.join(tmpdir(), 'rb-farm-settings-'));
});
afterAll(async () => {
  await svc?.close();
  await keyring?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function settingsWith(name: string, toml: string): Promise<{ settings: FarmSettings; file: string }> {
  const file = path.join(root, name, 'config.toml');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, toml);
  const settings = new FarmSettings({
    configFile: file,
    home: root,
    env: {},
    keychainFor: (p) => new KeytarKeychain(keychainEntryFor(p)),
  });
  return { settings, file };
}

suite('tray settings: farm, profile and folder', () => {
  it('reports a broken config.toml with its line and saves nothing', async () => {
    const toml = '[profiles.default]\nserviceUrl = "farm-without-scheme"\n';
    const { settings, file } = await settingsWith('broken', toml);
    expect((await settings.status()).configProblem).toMatch(new RegExp(`^${file}:2: "profiles.default.serviceUrl"`));
    const before = svc!.logs.length;
    const r = await settings.saveKey({
      serviceUrl: svc!.origin,
      profile: 'default',
      downloadsDir: '~/out',
      key: svc!.apiKey,
    });
    expect(r).toMatchObject({ ok: false, problem: 'CONFIG_INVALID' });
    expect(r.message).toContain(`${file}:2`);
    expect(r.message).toMatch(/Fix or remove the file.*not saved/);
    expect(await readFile(file, 'utf8')).toBe(toml);
    expect(keyring!.lookup(KEYCHAIN_SERVICE, keychainEntryFor('default').account)).toBeNull();
    expect(svc!.logs.length).toBe(before);
  });

  it('refuses a bad URL, profile name or folder before sending anything', async () => {
    const { settings } = await settingsWith('fields', '');
    const before = svc!.logs.length;
    const cases: [Parameters<FarmSettings['saveKey']>[0], RegExp][] = [
      [
        { serviceUrl: 'farm:8420', profile: 'default', downloadsDir: '~/out', key: 'k' },
        /^Service URL: .*not an http\(s\) URL/,
      ],
      [
        { serviceUrl: svc!.origin, profile: 'my farm', downloadsDir: '~/out', key: 'k' },
        /^Profile: "my farm" is not a profile name/,
      ],
      [
        { serviceUrl: svc!.origin, profile: 'default', downloadsDir: '  ', key: 'k' },
        /^Downloads folder: enter the folder/,
      ],
    ];
    for (const [request, message] of cases) {
      const r = await settings.saveKey(request);
      expect(r, r.message).toMatchObject({ ok: false, problem: 'BAD_SETTING' });
      expect(r.message).toMatch(message);
    }
    expect(svc!.logs.length).toBe(before);
  });

  it('lists the profiles of the file with their own keys, and saving with the stored key keeps it', async () => {
    const { settings, file } = await settingsWith(
      'profiles',
      `defaultProfile = "studio"\n[profiles.studio]\nserviceUrl = ` +
        `"${svc!.origin}"\n[profiles.home]\nserviceUrl = "http://127.0.0.1:9"\n`,
    );
    await new KeytarKeychain(keychainEntryFor('studio')).set(svc!.apiKey);
    const status = await settings.status();
    expect(status).toMatchObject({
      keychain: 'available',
      keyStored: true,
      profile: 'studio',
      serviceUrl: svc!.baseUrl,
    });
    expect(status.profiles.map((p) => [p.name, p.serviceUrl, p.keyStored])).toEqual([
      ['studio', svc!.origin, true],
      ['home', 'http://127.0.0.1:9', false],
    ]);
    // No key typed: the profile's stored key is checked with the URL, then the settings are saved.
    const r = await settings.saveKey({ serviceUrl: svc!.origin, profile: 'studio', downloadsDir: '~/renders' });
    expect(r, r.message).toMatchObject({ ok: true });
    expect(r.message).toContain('The stored key is kept');
    expect(await readFile(file, 'utf8')).toContain('downloadsDir = "~/renders"');
    // A profile without a key and no key typed: says to enter one.
    const none = await settings.saveKey({ serviceUrl: svc!.origin, profile: 'home', downloadsDir: '~/renders' });
    expect(none).toMatchObject({ ok: false, problem: 'NO_KEY' });
    expect(none.message).toMatch(
      /No API key is stored for profile "home" yet: enter one\. The settings and the key were not saved\./,
    );
  });
});
