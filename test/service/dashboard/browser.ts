// What the dashboard's Chromium tests share: whether Chromium and Blender are here (a missing one
// fails under CI=true and skips with a printed reason elsewhere), the browser itself, a page
// signed in with an API key that collects CSP violations and page errors, and screenshots kept
// under the temp folder for a person to look at.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
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
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
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
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content.Security.Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${origin}/`);
  await page.waitForSelector('#view-signin:not([hidden])');
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForSelector('#view-jobs:not([hidden])');
  return { context, page, problems };
}

/** Saves a full-page screenshot as `<prefix>-<name>.png` and prints where. */
export async function screenshot(page: Page, prefix: string, name: string): Promise<void> {
  const file = path.join(SHOTS, `${prefix}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  expect((await stat(file)).size).toBeGreaterThan(1000);
  console.log(`dashboard screenshot: ${file}`);
}
