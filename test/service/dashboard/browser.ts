// What the dashboard's Chromium tests share: the farm (service, worker, Blender) and Chromium that each test file
// starts once and closes after, skipped with a printed reason where Chromium or Blender is missing (failing under
// CI=true); pages that collect CSP violations and page errors, signed in with an API key or not yet; and
// screenshots kept under the temp folder for a person to look at.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startE2E, type E2E } from '../../helpers/e2e.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../scripts/chromium.mjs';

const CHROMIUM = CHROMIUM_PATH;
/** Kept after the run so a person can look at them. */
export const SHOTS = path.join(tmpdir(), 'renderbridge-test-results');

/** True when Chromium and Blender are installed; `what` names the test in the message otherwise. */
export function chromiumAndBlenderReady(what: string): boolean {
  const ready = existsSync(CHROMIUM) && spawnSync('sh', ['-c', 'command -v blender']).status === 0;
  if (!ready) {
    if (process.env.CI === 'true')
      throw new Error(`${what} needs ${CHROMIUM} and blender (Debian: apt-get install chromium blender)`);
    console.warn(`skipping ${what}: ${CHROMIUM} or blender missing (Debian: apt-get install chromium blender)`);
  }
  return ready;
}

export async function launchChromium(): Promise<Browser> {
  await mkdir(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}

/** A page in a fresh browser profile; `problems` gathers its CSP violations and page errors. */
export async function watchedPage(
  browser: Browser,
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content.Security.Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems };
}

/** Signs `page` in to the dashboard at `origin` with `apiKey`, through the sign-in form. */
export async function signIn(page: Page, origin: string, apiKey: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.waitForSelector('#view-signin:not([hidden])');
  // Found by its label and the button by its name, as assistive technology finds them.
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForSelector('#view-jobs:not([hidden])');
}

/**
 * A new page signed in to the dashboard at `origin` with `apiKey`; `problems` gathers CSP violations and page errors.
 */
export async function signedInPage(
  browser: Browser,
  origin: string,
  apiKey: string,
  viewport = { width: 1280, height: 900 },
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const watched = await watchedPage(browser, viewport);
  await signIn(watched.page, origin, apiKey);
  return watched;
}

/** Saves a full-page screenshot as `<prefix>-<name>.png` and prints where. */
export async function screenshot(page: Page, prefix: string, name: string): Promise<void> {
  const file = path.join(SHOTS, `${prefix}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  expect((await stat(file)).size).toBeGreaterThan(1000);
  console.log(`dashboard screenshot: ${file}`);
}

/** A test file's farm and browser; read `e2e` and `browser` only inside `suite`, once `beforeAll` has run. */
export interface ChromiumFarm {
  /** `describe`, skipping where Chromium or Blender is missing. */
  readonly suite: ReturnType<typeof describe.skipIf>;
  readonly ready: boolean;
  readonly e2e: E2E;
  readonly browser: Browser;
}

/**
 * Registers the file's `beforeAll` (the farm from `startE2E(options)`, then Chromium) and `afterAll` (both closed);
 * `what` names the test where Chromium or Blender is missing. Call it once, at the top of a test file.
 */
export function chromiumFarm(what: string, options?: Parameters<typeof startE2E>[0]): ChromiumFarm {
  const ready = chromiumAndBlenderReady(what);
  let e2e: E2E | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!ready) return;
    e2e = await startE2E(options);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await e2e?.svc.close();
  });
  // A getter that throws says plainly when a test reaches the farm before beforeAll started it.
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`${what}: the ${name} is not started yet (use it inside the suite)`);
    return value;
  };
  return {
    suite: describe.skipIf(!ready),
    ready,
    get e2e() {
      return started(e2e, 'farm');
    },
    get browser() {
      return started(browser, 'browser');
    },
  };
}
