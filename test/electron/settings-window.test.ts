// The settings window's page (electron/renderer/settings.*, bundled by electron/build.mjs) in real
// Chromium, with its own CSP, driven as a user would: a wrong key is refused and not stored, a good
// one is saved into a real gnome-keyring (read back with `secret-tool lookup`), and without a
// keychain the page says so and disables the form. A new profile pointing at a second farm (a real
// service on 127.0.0.2) is checked, URL and key together, before config.toml and the keychain are
// written, and a running daemon follows it. Electron cannot run here, so the preload's bridge is
// stood in for by Playwright's exposeFunction, which calls the same FarmSettings that main's IPC
// handlers call (the preload's own wiring is checked in security.test.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../daemon/config.js';
import { KeytarKeychain } from '../../daemon/keychain/keytar.js';
import { SecretToolKeychain } from '../../daemon/keychain/secret-tool.js';
import type { Keychain } from '../../daemon/ports.js';
import { FarmSettings } from '../../electron/core/farm-settings.js';
import type { ClearKeyRequest, SaveKeyRequest, TestConnectionRequest } from '../../electron/ipc.js';
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../../shared/constants.js';
import { Health } from '../../shared/daemon/api.js';
import { loadConfigFile } from '../../user-config/file.js';
import { keychainEntryFor } from '../../user-config/keychain-entry.js';
import { rawRequest, startTestDaemon } from '../daemon/harness.js';
import { waitUntil } from '../helpers/e2e.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { missingKeyringTools, startKeyringSession, type KeyringSession } from './keyring.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../scripts/chromium.mjs';

const CHROMIUM = CHROMIUM_PATH;
const missing = [...missingKeyringTools(), ...(existsSync(CHROMIUM) ? [] : [CHROMIUM])];
if (missing.includes(CHROMIUM)) {
  if (process.env.CI === 'true')
    throw new Error(`the settings window test needs ${CHROMIUM} (Debian: apt-get install chromium)`);
  console.warn(`skipping the settings window test: ${CHROMIUM} missing`);
}
const suite = missing.length === 0 ? describe : describe.skip;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOT = path.join(tmpdir(), 'renderbridge-test-results', 'settings-window.png');

let keyring: KeyringSession | undefined;
let svc: TestService | undefined;
let browser: Browser | undefined;
let built: string | undefined;

beforeAll(async () => {
  if (missing.length) return;
  keyring = await startKeyringSession();
  process.env.DBUS_SESSION_BUS_ADDRESS = keyring.address;
  svc = await startTestService();
  built = await mkdtemp(path.join(tmpdir(), 'rb-settings-page-'));
  await promisify(execFile)(process.execPath, ['electron/build.mjs', built], { cwd: ROOT });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await keyring?.close();
  if (built) await rm(built, { recursive: true, force: true });
});

interface UserFiles {
  root: string;
  env: NodeJS.ProcessEnv;
  configFile: string;
}

/**
 * A fresh per-user config folder whose default profile points at `serviceUrl` (as `renderbridge config set` writes it).
 */
async function userFiles(serviceUrl: string): Promise<UserFiles> {
  const root = await mkdtemp(path.join(tmpdir(), 'rb-settings-user-'));
  const configFile = path.join(root, 'config', 'renderbridge', 'config.toml');
  await mkdir(path.dirname(configFile), { recursive: true });
  await writeFile(configFile, `[profiles.default]\nserviceUrl = "${serviceUrl}"\n`);
  return { root, env: { XDG_CONFIG_HOME: path.join(root, 'config') }, configFile };
}

/** The window's logic as main builds it, over `files` and one keychain per profile. */
function farmSettings(
  files: UserFiles,
  keychainFor: (profile: string) => Keychain = (p) => new KeytarKeychain(keychainEntryFor(p)),
): FarmSettings {
  return new FarmSettings({ configFile: files.configFile, home: files.root, env: files.env, keychainFor });
}

/** Opens the settings page with window.renderbridge bound to `settings` (as the preload + IPC would). */
async function openSettings(settings: FarmSettings): Promise<{ page: Page; cspErrors: string[] }> {
  const page = await browser!.newPage();
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') cspErrors.push(m.text());
  });
  await page.exposeFunction('__rbStatus', () => settings.status());
  await page.exposeFunction('__rbTest', (r: TestConnectionRequest) => settings.testConnection(r));
  await page.exposeFunction('__rbSave', (r: SaveKeyRequest) => settings.saveKey(r));
  await page.exposeFunction('__rbClear', (r: ClearKeyRequest) => settings.clearKey(r));
  await page.addInitScript(() => {
    const w = window as unknown as Record<string, (...a: unknown[]) => unknown>;
    Object.defineProperty(window, 'renderbridge', {
      value: Object.freeze({
        status: () => w.__rbStatus!(),
        testConnection: (r: unknown) => w.__rbTest!(r),
        saveKey: (r: unknown) => w.__rbSave!(r),
        clearKey: (r: unknown) => w.__rbClear!(r),
      }),
    });
  });
  await page.goto(pathToFileURL(path.join(built!, 'renderer', 'settings.html')).href);
  return { page, cspErrors };
}

const lookup = () => keyring!.lookup(KEYCHAIN_SERVICE, KEYCHAIN_ACCOUNT);

suite('settings window page in Chromium', () => {
  it('tests and saves the key into the OS keychain, refusing a wrong one', async () => {
    const files = await userFiles(svc!.origin);
    const { page, cspErrors } = await openSettings(farmSettings(files));
    await page.waitForSelector('#keychain:has-text("No API key is stored yet.")');
    expect(await page.textContent('#service')).toBe(svc!.baseUrl);

    await page.fill('#key', 'rb_live_wrong-key-0000000000000000000000');
    await page.click('#test');
    await page.waitForSelector('#result[data-ok="false"]');
    expect(await page.textContent('#result')).toMatch(/refused this key \(401 UNAUTHORIZED\)/);
    await page.click('#save');
    await page.waitForSelector('#result[data-ok="false"]:has-text("not saved")');
    expect(lookup()).toBeNull();

    await page.fill('#key', svc!.apiKey);
    await page.click('#test');
    await page.waitForSelector('#result[data-ok="true"]:has-text("accepts this key")');
    await page.click('#save');
    await page.waitForSelector('#result[data-ok="true"]:has-text("saved in the OS keychain")');
    // Saved: the field is emptied, the page only knows that a key is stored.
    expect(await page.inputValue('#key')).toBe('');
    await page.waitForSelector('#keychain:has-text("An API key is stored in the OS keychain.")');
    expect(lookup()).toBe(svc!.apiKey);
    expect(await page.content()).not.toContain(svc!.apiKey);

    await page.click('#clear');
    await page.waitForSelector('#keychain:has-text("No API key is stored yet.")');
    expect(lookup()).toBeNull();
    // The page ran under its own CSP (script and style from its folder) without a violation.
    expect(cspErrors, cspErrors.join('\n')).toEqual([]);
    await page.close();
    await rm(files.root, { recursive: true, force: true });
  });

  it('says there is no keychain and disables the form instead of storing the key elsewhere', async () => {
    const files = await userFiles(svc!.origin);
    const { page } = await openSettings(
      farmSettings(files, () => new SecretToolKeychain({ env: { PATH: process.env.PATH } })),
    );
    await page.waitForSelector('#keychain[data-ok="false"]');
    expect(await page.textContent('#keychain')).toMatch(
      /^No OS keychain is available, so the API key was not saved\..*never in a file/,
    );
    for (const id of ['#key', '#test', '#save', '#clear', '#url', '#profile', '#downloads'])
      expect(await page.isDisabled(id), id).toBe(true);
    await page.close();
    await rm(files.root, { recursive: true, force: true });
  });
});

suite('settings window: a second farm and a new profile', () => {
  it(
    'checks URL and key together, saves nothing on a refused key, then saves URL, profile, folder and key, and ' +
      'the running daemon follows',
    async () => {
      const farmB = await startTestService({ host: '127.0.0.2' });
      const files = await userFiles(svc!.origin);
      const reloadConfig = () =>
        loadDaemonConfig(files.env, {}, undefined, { port: 0, stateDir: path.join(files.root, 'state') });
      const td = await startTestDaemon(reloadConfig(), { reloadConfig, apiKey: 'rb_live_daemon-key' });
      const health = async () =>
        Health.parse(
          (await rawRequest(`${td.daemon.origin}/health`, { headers: { authorization: `Bearer ${td.daemon.token}` } }))
            .json,
        );
      const before = await readFile(files.configFile, 'utf8');
      const lookupB = () => keyring!.lookup(KEYCHAIN_SERVICE, keychainEntryFor('farm-b').account);
      try {
        expect(farmB.origin).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
        expect(await health()).toMatchObject({ serviceUrl: svc!.baseUrl, profile: 'default' });
        const { page, cspErrors } = await openSettings(farmSettings(files));
        await page.waitForSelector('#keychain:has-text("No API key is stored yet.")');
        expect(await page.inputValue('#profile')).toBe('default');
        expect(await page.inputValue('#url')).toBe(svc!.origin);

        // A new profile for the second farm, typed as an artist would: a bare origin.
        const downloads = path.join(files.root, 'renders-b');
        await page.fill('#profile', 'farm-b');
        await page.fill('#url', farmB.origin);
        await page.fill('#downloads', downloads);

        // The first farm's key is not a key of the second farm: refused, and nothing saved.
        await page.fill('#key', svc!.apiKey);
        await page.click('#save');
        await page.waitForSelector('#result[data-ok="false"]:has-text("not saved")');
        expect(await page.textContent('#result')).toMatch(/refused this key \(401 UNAUTHORIZED\)/);
        expect(await readFile(files.configFile, 'utf8')).toBe(before);
        expect(lookupB()).toBeNull();

        // The right key at a URL where nothing answers: says so, saves nothing.
        await page.fill('#key', farmB.apiKey);
        await page.fill('#url', 'http://127.0.0.2:9');
        await page.click('#test');
        await page.waitForSelector('#result[data-ok="false"]');
        expect(await page.textContent('#result')).toMatch(
          /http:\/\/127\.0\.0\.2:9\/api\/external\/v1 did not answer.*check the service URL/,
        );
        await page.fill('#url', 'farm-b:8420');
        await page.click('#test');
        await page.waitForSelector('#result[data-ok="false"]:has-text("Service URL")');

        await page.fill('#url', farmB.origin);
        await page.click('#test');
        await page.waitForSelector(`#result[data-ok="true"]:has-text("Connected to ${farmB.baseUrl}")`);
        await page.click('#save');
        await page.waitForSelector('#result[data-ok="true"]:has-text("saved in the OS keychain")');
        await page.waitForSelector('#active:has-text("farm-b")');
        expect(await page.textContent('#service')).toBe(farmB.baseUrl);
        expect(await page.inputValue('#key')).toBe('');
        expect(await page.content()).not.toContain(farmB.apiKey);
        await mkdir(path.dirname(SCREENSHOT), { recursive: true });
        // The size of the tray's Settings window (electron/main/windows.ts).
        await page.setViewportSize({ width: 560, height: 600 });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
        expect((await stat(SCREENSHOT)).size).toBeGreaterThan(1000);
        console.log(`settings window screenshot: ${SCREENSHOT}`);
        expect(cspErrors, cspErrors.join('\n')).toEqual([]);
        await page.close();

        // config.toml read back: the profile with the URL as typed and the folder, now the default one.
        const saved = loadConfigFile(files.configFile).data;
        expect(saved.defaultProfile).toBe('farm-b');
        expect(saved.profiles?.['farm-b']).toEqual({ serviceUrl: farmB.origin, downloadsDir: downloads });
        expect(saved.profiles?.default).toEqual({ serviceUrl: svc!.origin });
        // The key in farm-b's own keychain entry, as `secret-tool lookup` shows it; the default entry untouched.
        expect(lookupB()).toBe(farmB.apiKey);
        expect(lookup()).toBeNull();
        // The running daemon follows the edit without a restart.
        await waitUntil('the daemon on the new farm', async () => (await health()).serviceUrl === farmB.baseUrl, {
          timeoutMs: 10_000,
        });
        expect((await health()).profile).toBe('farm-b');
      } finally {
        await td.close();
        await farmB.close();
        await rm(files.root, { recursive: true, force: true });
      }
    },
  );
});
