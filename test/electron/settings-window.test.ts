// The settings window's page (electron/renderer/settings.*, bundled by electron/build.mjs) in real
// Chromium, with its own CSP, driven as a user would: a wrong key is refused and not stored, a good
// one is saved into a real gnome-keyring (read back with `secret-tool lookup`), and without a
// keychain the page says so and disables the form. Electron cannot run here, so the preload's
// bridge is stood in for by Playwright's exposeFunction, which calls the same KeychainSettings that
// main's IPC handlers call (the preload's own wiring is checked in security.test.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeytarKeychain } from '../../daemon/keychain/keytar.js';
import { SecretToolKeychain } from '../../daemon/keychain/secret-tool.js';
import { KeychainSettings } from '../../electron/core/keychain-settings.js';
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../../shared/constants.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { missingKeyringTools, startKeyringSession, type KeyringSession } from './keyring.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const missing = [...missingKeyringTools(), ...(existsSync(CHROMIUM) ? [] : [CHROMIUM])];
if (missing.includes(CHROMIUM)) {
  if (process.env.CI === 'true') throw new Error(`the settings window test needs ${CHROMIUM} (Debian: apt-get install chromium)`);
  console.warn(`skipping the settings window test: ${CHROMIUM} missing`);
}
const suite = missing.length === 0 ? describe : describe.skip;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

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
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await keyring?.close();
  if (built) await rm(built, { recursive: true, force: true });
});

/** Opens the settings page with window.renderbridge bound to `settings` (as the preload + IPC would). */
async function openSettings(settings: KeychainSettings): Promise<{ page: Page; cspErrors: string[] }> {
  const page = await browser!.newPage();
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') cspErrors.push(m.text());
  });
  await page.exposeFunction('__rbStatus', () => settings.status());
  await page.exposeFunction('__rbTest', (r: { key?: string }) => settings.testConnection(r.key));
  await page.exposeFunction('__rbSave', (r: { key: string }) => settings.saveKey(r.key));
  await page.exposeFunction('__rbClear', () => settings.clearKey());
  await page.addInitScript(() => {
    const w = window as unknown as Record<string, (...a: unknown[]) => unknown>;
    Object.defineProperty(window, 'renderbridge', {
      value: Object.freeze({ status: () => w.__rbStatus!(), testConnection: (r: unknown) => w.__rbTest!(r), saveKey: (r: unknown) => w.__rbSave!(r), clearKey: () => w.__rbClear!() }),
    });
  });
  await page.goto(pathToFileURL(path.join(built!, 'renderer', 'settings.html')).href);
  return { page, cspErrors };
}

const lookup = () => keyring!.lookup(KEYCHAIN_SERVICE, KEYCHAIN_ACCOUNT);

suite('settings window page in Chromium', () => {
  it('tests and saves the key into the OS keychain, refusing a wrong one', async () => {
    const { page, cspErrors } = await openSettings(new KeychainSettings({ keychain: new KeytarKeychain(), serviceUrl: svc!.baseUrl }));
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
  });

  it('says there is no keychain and disables the form instead of storing the key elsewhere', async () => {
    const { page } = await openSettings(new KeychainSettings({ keychain: new SecretToolKeychain({ env: { PATH: process.env.PATH } }), serviceUrl: svc!.baseUrl }));
    await page.waitForSelector('#keychain[data-ok="false"]');
    expect(await page.textContent('#keychain')).toMatch(/^No OS keychain is available, so the API key was not saved\..*never in a file/);
    for (const id of ['#key', '#test', '#save', '#clear']) expect(await page.isDisabled(id), id).toBe(true);
    await page.close();
  });
});
