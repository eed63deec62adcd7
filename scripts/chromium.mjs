// Chromium as scripts/render-icons.mjs and the Chromium tests (dashboard, job window, settings
// window) launch it headless through playwright-core: Debian's binary, and the flags that keep it
// off the network, from updating itself, and from needing a GPU or a sandbox on a CI machine.
// Plain JavaScript so that `node scripts/render-icons.mjs` runs it without a TypeScript step.

/** Debian's Chromium (apt-get install chromium). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
