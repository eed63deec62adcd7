// The tray's settings logic (electron/core/keychain-settings.ts) against a real Secret Service
// (gnome-keyring in a private D-Bus session) and a real reference service. The Electron window
// itself cannot run here (no Electron binary); this is everything it does besides drawing. The
// stored key is read back with `secret-tool lookup`, the way a user checks it; "Test connection"
// is a real GET /jobs?pageSize=1. Without a keychain the key is refused, never put in a file.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeytarKeychain } from '../../daemon/keychain/keytar.js';
import { SecretToolKeychain } from '../../daemon/keychain/secret-tool.js';
import { KeychainSettings } from '../../electron/core/keychain-settings.js';
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../../shared/constants.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { missingKeyringTools, startKeyringSession, type KeyringSession } from './keyring.js';

const missing = missingKeyringTools();
const suite = missing.length === 0 ? describe : describe.skip;

let keyring: KeyringSession | undefined;
let svc: TestService | undefined;

beforeAll(async () => {
  if (missing.length) return;
  keyring = await startKeyringSession();
  // keytar (libsecret) connects to the bus named here on first use; vitest runs each file in its own process.
  process.env.DBUS_SESSION_BUS_ADDRESS = keyring.address;
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  await keyring?.close();
});

const lookup = () => keyring!.lookup(KEYCHAIN_SERVICE, KEYCHAIN_ACCOUNT);

/** Every file under `dir` whose bytes contain `needle`. */
async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    if ((await readFile(file)).includes(needle)) found.push(file);
  }
  return found;
}

suite('tray settings: the API key in the OS keychain', () => {
  it('refuses a wrong key without storing it, stores a good one where the daemon reads it, and clears it', async () => {
    const settings = new KeychainSettings({ keychain: new KeytarKeychain(), serviceUrl: svc!.baseUrl });
    expect(await settings.status()).toEqual({ keychain: 'available', keyStored: false, serviceUrl: svc!.baseUrl });

    const wrong = 'rb_live_this-key-does-not-exist-0000000000';
    const refused = await settings.saveKey(wrong);
    expect(refused).toMatchObject({ ok: false, problem: 'UNAUTHORIZED' });
    expect(refused.message).toMatch(/refused this key \(401 UNAUTHORIZED\).*not saved/);
    expect(refused.message).not.toContain(wrong);
    expect(lookup()).toBeNull();

    const saved = await settings.saveKey(`  ${svc!.apiKey}\n`);
    expect(saved, saved.message).toMatchObject({ ok: true });
    expect(saved.message).not.toContain(svc!.apiKey);
    // What `secret-tool lookup service renderbridge account api-key` shows: the key, trimmed.
    expect(lookup()).toBe(svc!.apiKey);
    expect(await settings.status()).toMatchObject({ keychain: 'available', keyStored: true });
    // The keyring's files hold it encrypted only.
    expect(await filesContaining(keyring!.home, svc!.apiKey)).toEqual([]);

    // Test connection with the stored key, and with a typed one.
    expect(await settings.testConnection()).toMatchObject({
      ok: true,
      message: expect.stringContaining('accepts this key'),
    });
    const bad = await settings.testConnection(wrong);
    expect(bad).toMatchObject({ ok: false, problem: 'UNAUTHORIZED' });
    expect(await settings.testConnection('  ')).toMatchObject({ ok: false, problem: 'EMPTY_KEY' });
    // The service saw a real GET /jobs?pageSize=1.
    expect(svc!.logs.join('\n')).toMatch(/\/jobs\?pageSize=1/);

    expect(await settings.clearKey()).toMatchObject({ ok: true, message: expect.stringContaining('removed') });
    expect(lookup()).toBeNull();
    expect(await settings.testConnection()).toMatchObject({ ok: false, problem: 'NO_KEY' });
  });

  it('says when the service cannot be reached, and does not store the key then', async () => {
    const settings = new KeychainSettings({
      keychain: new KeytarKeychain(),
      serviceUrl: 'http://127.0.0.1:9/api/external/v1',
    });
    const r = await settings.saveKey(svc!.apiKey);
    expect(r).toMatchObject({ ok: false, problem: 'SERVICE_UNREACHABLE' });
    expect(r.message).toContain('http://127.0.0.1:9/api/external/v1');
    expect(lookup()).toBeNull();
  });

  it('refuses when no keychain is available, and writes the key nowhere', async () => {
    const noBus = new SecretToolKeychain({ env: { PATH: process.env.PATH } });
    const noModule = new KeytarKeychain({ moduleName: 'keytar-not-installed' });
    const before = svc!.logs.length;
    for (const keychain of [noBus, noModule]) {
      const settings = new KeychainSettings({ keychain, serviceUrl: svc!.baseUrl });
      const status = await settings.status();
      expect(status).toMatchObject({ keychain: 'unavailable', keyStored: false });
      const r = await settings.saveKey(svc!.apiKey);
      expect(r).toMatchObject({ ok: false, problem: 'KEYCHAIN_UNAVAILABLE' });
      expect(r.message).toMatch(/No OS keychain is available, so the API key was not saved.*never in a file/);
      expect(r.message).not.toContain(svc!.apiKey);
      expect(await settings.testConnection()).toMatchObject({ ok: false, problem: 'KEYCHAIN_UNAVAILABLE' });
    }
    // Refused before anything was sent: the service saw no request, the keyring holds nothing,
    // and no file in the session's HOME or in this repository's state folder holds the key.
    expect(svc!.logs.length).toBe(before);
    expect(lookup()).toBeNull();
    expect(await filesContaining(keyring!.home, svc!.apiKey)).toEqual([]);
    expect(await filesContaining(svc!.dataDir, svc!.apiKey)).toEqual([]);
  });
});
