// The Keychain adapters against a real Secret Service: a private D-Bus session with gnome-keyring
// (unlocked, its keyrings in a temp HOME, so the user's own keyring is never touched). libsecret
// connects to the session bus named by DBUS_SESSION_BUS_ADDRESS on first use, so this test
// process points that variable at the private session before any keychain call (vitest runs each
// test file in its own process). Also: the tray's entry (KEYCHAIN_SERVICE / KEYCHAIN_ACCOUNT) is
// the one `secret-tool lookup` shows and the daemon reads, and a missing keychain falls back to
// RENDERBRIDGE_API_KEY.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyProvider } from '../../../daemon/keychain/api-key.js';
import { KeychainUnavailableError } from '../../../daemon/keychain/errors.js';
import { KeytarKeychain } from '../../../daemon/keychain/keytar.js';
import { SecretToolKeychain } from '../../../daemon/keychain/secret-tool.js';
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../../../shared/constants.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { keychainConformance, type KeychainEntryName } from './keychain-conformance.js';

const TOOLS = ['dbus-run-session', 'gnome-keyring-daemon', 'secret-tool'];
const missingTools = TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
if (missingTools.length > 0) {
  if (process.env.CI === 'true')
    throw new Error(`keychain tests need ${missingTools.join(', ')} (Debian: gnome-keyring dbus-x11 libsecret-tools)`);
  console.warn(
    `skipping the keychain tests: ${missingTools.join(', ')} not installed (Debian: apt-get install ` +
      'gnome-keyring dbus-x11 libsecret-tools)',
  );
}
const suite = missingTools.length === 0 ? describe : describe.skip;

let home: string;
let session: ChildProcess | undefined;
let sessionShellPid: number | undefined;

/** Starts `dbus-run-session` with an unlocked gnome-keyring; resolves with the bus address. */
async function startKeyringSession(dir: string): Promise<string> {
  const script =
    'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; echo "PID=$$"; echo ' +
    '"ADDR=$DBUS_SESSION_BUS_ADDRESS"; exec sleep 3600';
  const child = spawn('dbus-run-session', ['--', 'sh', '-c', script], {
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_DATA_HOME: path.join(dir, 'data'),
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      XDG_CACHE_HOME: path.join(dir, 'cache'),
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  session = child;
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no D-Bus session after 20 s: ${out}`)), 20_000);
    child.on('exit', (code) => reject(new Error(`dbus-run-session exited (${code}): ${out}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const pid = /PID=(\d+)/.exec(out);
      const addr = /ADDR=(\S+)/.exec(out);
      if (pid && addr) {
        clearTimeout(timer);
        sessionShellPid = Number(pid[1]);
        resolve(addr[1]!);
      }
    });
  });
}

function secretTool(args: string[]): { status: number | null; stdout: string } {
  const r = spawnSync('secret-tool', args, { env: process.env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout };
}

function cliLookup(entry: KeychainEntryName): string | null {
  const r = secretTool(['lookup', 'service', entry.service, 'account', entry.account]);
  return r.status === 0 ? r.stdout : null;
}

function cliCount(entry: KeychainEntryName): number {
  const r = secretTool(['search', '--all', 'service', entry.service, 'account', entry.account]);
  return (r.stdout.match(/^\[\//gm) ?? []).length;
}

let svc: TestService | undefined;

beforeAll(async () => {
  if (missingTools.length > 0) return;
  home = await mkdtemp(path.join(tmpdir(), 'rb-keyring-'));
  process.env.DBUS_SESSION_BUS_ADDRESS = await startKeyringSession(home);
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
  // Ending the session's shell makes dbus-run-session stop its bus; gnome-keyring leaves with it.
  if (sessionShellPid) process.kill(sessionShellPid, 'SIGTERM');
  if (session && session.exitCode === null) await new Promise((resolve) => session!.once('exit', resolve));
  if (home) await rm(home, { recursive: true, force: true });
});

const harness =
  (keychain: (e: KeychainEntryName) => KeytarKeychain | SecretToolKeychain) => (entry: KeychainEntryName) => ({
    keychain: keychain(entry),
    lookup: async () => cliLookup(entry),
    count: async () => cliCount(entry),
  });

if (missingTools.length === 0) {
  keychainConformance(
    'keytar',
    harness((e) => new KeytarKeychain(e)),
  );
  keychainConformance(
    'secret-tool',
    harness((e) => new SecretToolKeychain(e)),
  );
}

suite('keychain adapters together', () => {
  it("read each other's entries", async () => {
    const entry = { service: 'renderbridge-conformance', account: `cross-${process.pid}` };
    const keytar = new KeytarKeychain(entry);
    const tool = new SecretToolKeychain(entry);
    await keytar.set('from-keytar');
    expect(await tool.get()).toBe('from-keytar');
    await tool.set('from-secret-tool');
    expect(await keytar.get()).toBe('from-secret-tool');
    expect(cliCount(entry)).toBe(1);
    expect(await keytar.delete()).toBe(true);
    expect(await tool.get()).toBeNull();
  });

  it("the tray's entry is what secret-tool shows and what the daemon uses to call the service", async () => {
    // The tray app stores the key under the shared constants (through keytar, as Electron apps do).
    const tray = new KeytarKeychain();
    await tray.set(svc!.apiKey);
    expect(cliLookup({ service: KEYCHAIN_SERVICE, account: KEYCHAIN_ACCOUNT })).toBe(svc!.apiKey);
    for (const keychain of [new KeytarKeychain(), new SecretToolKeychain()]) {
      const env = { RENDERBRIDGE_API_KEY: 'rb_live_not-this-one' };
      const provider = new ApiKeyProvider({ serviceUrl: svc!.baseUrl, keychain, env, keyRefreshMs: 0 });
      expect(await provider.apiKeySource()).toBe('keychain');
      // The service accepts the key the daemon read: it is the tray's one, not the environment's.
      const { jobs } = await (await provider.client()).listJobs();
      expect(Array.isArray(jobs)).toBe(true);
    }
    // Once the tray forgets the key, the daemon falls back to the environment.
    await tray.delete();
    const provider = new ApiKeyProvider({
      serviceUrl: svc!.baseUrl,
      keychain: new KeytarKeychain(),
      env: { RENDERBRIDGE_API_KEY: svc!.apiKey },
      keyRefreshMs: 0,
    });
    expect(await provider.apiKeySource()).toBe('env');
    // An entry stored by hand with secret-tool (no keytar schema attribute) is found by the CLI adapter.
    spawnSync(
      'secret-tool',
      ['store', '--label=renderbridge', 'service', KEYCHAIN_SERVICE, 'account', KEYCHAIN_ACCOUNT],
      { input: 'by-hand', env: process.env },
    );
    expect(await new SecretToolKeychain().get()).toBe('by-hand');
    expect(await new SecretToolKeychain().delete()).toBe(true);
    expect(cliLookup({ service: KEYCHAIN_SERVICE, account: KEYCHAIN_ACCOUNT })).toBeNull();
  });
});

suite('an unavailable keychain', () => {
  it('is reported as "keychain unavailable" and the daemon uses RENDERBRIDGE_API_KEY', async () => {
    const noBus = new SecretToolKeychain({ env: { PATH: process.env.PATH } });
    await expect(noBus.get()).rejects.toThrow(KeychainUnavailableError);
    await expect(noBus.get()).rejects.toThrow(/^keychain unavailable: /);
    const notInstalled = new SecretToolKeychain({ binary: 'secret-tool-not-installed' });
    await expect(notInstalled.get()).rejects.toThrow(/keychain unavailable: .*not installed/);
    // A machine where keytar's native module is missing: the import itself fails.
    const noModule = new KeytarKeychain({ moduleName: 'keytar-not-installed' });
    await expect(noModule.get()).rejects.toThrow(/keychain unavailable: keytar-not-installed could not be loaded/);

    for (const keychain of [noBus, notInstalled, noModule]) {
      const provider = new ApiKeyProvider({
        serviceUrl: svc!.baseUrl,
        keychain,
        env: { RENDERBRIDGE_API_KEY: svc!.apiKey },
      });
      expect(await provider.apiKeySource()).toBe('env');
      expect(provider.keychainProblem).toMatch(/^keychain unavailable: /);
      await (await provider.client()).listJobs();
      const none = new ApiKeyProvider({ serviceUrl: svc!.baseUrl, keychain, env: {} });
      await expect(none.client()).rejects.toMatchObject({ code: 'NO_API_KEY', status: 409 });
    }
  });
});
