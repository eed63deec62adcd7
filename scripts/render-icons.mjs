// `npm run icons [-- OUT_DIR]`: renders the icon sources (electron/build-resources/icons/*.svg) to
// the PNGs the tray app and electron-builder use, into electron/build-resources/ or OUT_DIR: the
// 512x512 app icon, and each tray state at 32x32 plus a 64x64 `@2x` file that Electron's
// nativeImage picks up by name on HiDPI screens. Drawn from the vector source at each size rather
// than scaled, so the small sizes stay sharp. Rendered by real Chromium (playwright-core, never its
// downloaded browsers) with a transparent background; the PNGs are committed, so packaging needs
// no browser. Chromium: $CHROMIUM, default /usr/bin/chromium (Debian: apt-get install chromium).
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resources = path.join(root, 'electron', 'build-resources');
const sources = path.join(resources, 'icons');
const out = path.resolve(process.argv[2] ?? resources);
const executablePath = process.env.CHROMIUM ?? CHROMIUM_PATH;

/** Every PNG written: source SVG, file name, width and height in pixels. */
const TARGETS = [
  { svg: 'icon.svg', png: 'icon.png', size: 512 },
  ...['idle', 'busy', 'error', 'stopped'].flatMap((state) => [
    { svg: `tray-${state}.svg`, png: `tray-${state}.png`, size: 32 },
    { svg: `tray-${state}.svg`, png: `tray-${state}@2x.png`, size: 64 },
  ]),
];

if (!existsSync(executablePath)) {
  process.stderr.write(
    `render-icons: no Chromium at ${executablePath} (Debian: apt-get install chromium, or set CHROMIUM)\n`,
  );
  process.exit(1);
}
await mkdir(out, { recursive: true });
const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ deviceScaleFactor: 1 });
  for (const t of TARGETS) {
    const svg = await readFile(path.join(sources, t.svg), 'utf8');
    await page.setViewportSize({ width: t.size, height: t.size });
    // Inline rather than <img>: nothing to wait for, and the SVG fills the viewport exactly.
    await page.setContent(
      '<!doctype html><html><head><style>html,body{margin:0;background:transparent}' +
        'svg{display:block;width:100vw;height:100vh}</style></head>' +
        `<body>${svg}</body></html>`,
    );
    const png = await page.screenshot({ omitBackground: true, type: 'png' });
    await writeFile(path.join(out, t.png), png);
    process.stdout.write(
      `wrote ${path.relative(process.cwd(), path.join(out, t.png)) || t.png} (${t.size}x${t.size})\n`,
    );
  }
} finally {
  await browser.close();
}
