// The tray and app icons (electron/build-resources/*.png, rendered from icons/*.svg by
// `npm run icons`), checked the way a person would look at them: every file electron-builder and
// the tray load is there at its size with a transparent background; each tray state has a @2x
// twin of the same picture; the four states differ in shape, not only in colour (a colour-blind
// user, or a monochrome panel, still tells them apart); "stopped" is grey; every state stands out
// on a light and on a dark panel; and re-rendering the SVGs in real Chromium gives the committed
// pictures again (so nobody edits an SVG and forgets the PNGs).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { pngInfo } from '../helpers/png.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESOURCES = path.join(ROOT, 'electron', 'build-resources');
const STATES = ['idle', 'busy', 'error', 'stopped'] as const;
/** Every PNG the app and electron-builder use, with its size. */
const EXPECTED: Record<string, number> = {
  'icon.png': 512,
  ...Object.fromEntries(
    STATES.flatMap((s) => [
      [`tray-${s}.png`, 32],
      [`tray-${s}@2x.png`, 64],
    ]),
  ),
};
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

interface Rgba {
  width: number;
  height: number;
  /** width * height * 4 bytes, unfiltered. */
  pixels: Uint8Array;
}

/** Decodes an 8-bit RGBA, non-interlaced PNG (what Chromium writes); throws on anything else. */
function decodeRgba(buf: Buffer): Rgba {
  const { width, height, bitDepth, colorType } = pngInfo(buf);
  if (bitDepth !== 8 || colorType !== 6 || buf[28] !== 0)
    throw new Error(`not 8-bit non-interlaced RGBA (depth ${bitDepth}, colour type ${colorType})`);
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    if (buf.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(buf.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x]!;
      const a = x >= 4 ? pixels[row + x - 4]! : 0;
      const b = y > 0 ? pixels[row - stride + x]! : 0;
      const c = x >= 4 && y > 0 ? pixels[row - stride + x - 4]! : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a),
        pb = Math.abs(p - b),
        pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      if (predictor === undefined) throw new Error(`bad filter ${filter} on row ${y}`);
      pixels[row + x] = (v + predictor) & 0xff;
    }
  }
  return { width, height, pixels };
}

async function image(dir: string, name: string): Promise<Rgba> {
  return decodeRgba(await readFile(path.join(dir, name)));
}

const alphaAt = (img: Rgba, x: number, y: number) => img.pixels[(y * img.width + x) * 4 + 3]!;
/** Share of pixels that are solid (alpha > 127) in one image and clear in the other: a difference of shape. */
function shapeDifference(a: Rgba, b: Rgba): number {
  let n = 0;
  for (let i = 3; i < a.pixels.length; i += 4) if (a.pixels[i]! > 127 !== b.pixels[i]! > 127) n++;
  return n / (a.width * a.height);
}
/** Share of pixels that stand out from a panel of grey level `bg` once composited on it (a luminance step of 25%+). */
function standsOut(img: Rgba, bg: number): number {
  let n = 0;
  for (let i = 0; i < img.pixels.length; i += 4) {
    const alpha = img.pixels[i + 3]! / 255;
    const lum = 0.2126 * img.pixels[i]! + 0.7152 * img.pixels[i + 1]! + 0.0722 * img.pixels[i + 2]!;
    if (Math.abs(lum * alpha + bg * (1 - alpha) - bg) >= 64) n++;
  }
  return n / (img.width * img.height);
}
/** The image at half its size, each pixel the mean of four. */
function halve(img: Rgba): Rgba {
  const width = img.width / 2,
    height = img.height / 2;
  const pixels = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 4; c++) {
        const at = (dx: number, dy: number) => img.pixels[((2 * y + dy) * img.width + 2 * x + dx) * 4 + c]!;
        pixels[(y * width + x) * 4 + c] = Math.round((at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1)) / 4);
      }
    }
  }
  return { width, height, pixels };
}
/** Mean difference per channel (0-255) between two images of one size. */
function meanDifference(a: Rgba, b: Rgba): number {
  let sum = 0;
  for (let i = 0; i < a.pixels.length; i++) sum += Math.abs(a.pixels[i]! - b.pixels[i]!);
  return sum / a.pixels.length;
}

describe('tray and app icons', () => {
  it('has every PNG at its size, RGBA with a transparent background and a solid picture', async () => {
    for (const [name, size] of Object.entries(EXPECTED)) {
      const img = await image(RESOURCES, name);
      expect({ name, width: img.width, height: img.height }).toEqual({ name, width: size, height: size });
      const last = size - 1;
      expect(
        [alphaAt(img, 0, 0), alphaAt(img, last, 0), alphaAt(img, 0, last), alphaAt(img, last, last)],
        name,
      ).toEqual([0, 0, 0, 0]);
      const alphas = Array.from({ length: size * size }, (_, i) => img.pixels[i * 4 + 3]!);
      expect(alphas.filter((a) => a === 0).length / alphas.length, `${name} clear share`).toBeGreaterThan(0.15);
      expect(alphas.filter((a) => a === 255).length / alphas.length, `${name} solid share`).toBeGreaterThan(0.15);
    }
  });

  it('gives each tray state a @2x twin that is the same picture at twice the resolution', async () => {
    const small = Object.fromEntries(
      await Promise.all(STATES.map(async (s) => [s, await image(RESOURCES, `tray-${s}.png`)] as const)),
    );
    for (const s of STATES) {
      const halved = halve(await image(RESOURCES, `tray-${s}@2x.png`));
      const distances = Object.fromEntries(STATES.map((o) => [o, meanDifference(halved, small[o]!)]));
      // Closest to its own 1x file by far; the 1x edge is a whole pixel, so not identical.
      for (const o of STATES.filter((o) => o !== s))
        expect(distances[s]! * 1.5, `${s}@2x vs ${o}`).toBeLessThan(distances[o]!);
      expect(distances[s], s).toBeLessThan(20);
    }
  });

  it('draws the four tray states as different shapes, greys "stopped", shows on light and dark panels', async () => {
    const imgs = Object.fromEntries(
      await Promise.all(STATES.map(async (s) => [s, await image(RESOURCES, `tray-${s}.png`)] as const)),
    );
    for (const [i, a] of STATES.entries()) {
      for (const b of STATES.slice(i + 1)) {
        // At least 30 of the 1024 pixels (a badge, a slash), so the difference survives at 16 px.
        expect(shapeDifference(imgs[a]!, imgs[b]!), `${a} vs ${b}`).toBeGreaterThan(0.03);
      }
    }
    // Stopped is grey: its solid pixels carry (almost) no colour, where idle's are blue.
    const chroma = (img: Rgba) => {
      const solid: number[] = [];
      for (let i = 0; i < img.pixels.length; i += 4) {
        if (img.pixels[i + 3] === 255)
          solid.push(
            Math.max(img.pixels[i]!, img.pixels[i + 1]!, img.pixels[i + 2]!) -
              Math.min(img.pixels[i]!, img.pixels[i + 1]!, img.pixels[i + 2]!),
          );
      }
      return solid.reduce((x, y) => x + y, 0) / solid.length;
    };
    expect(chroma(imgs.stopped!)).toBeLessThan(20);
    expect(chroma(imgs.idle!)).toBeGreaterThan(80);
    for (const s of STATES) {
      expect(standsOut(imgs[s]!, 255), `${s} on a light panel`).toBeGreaterThan(0.25);
      expect(standsOut(imgs[s]!, 0x20), `${s} on a dark panel`).toBeGreaterThan(0.25);
    }
  });

  it('is what electron-builder.yml and the tray load', async () => {
    const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
    const config = yaml.load(await readFile(path.join(ROOT, 'electron-builder.yml'), 'utf8')) as {
      directories: { buildResources: string };
      files: string[];
      linux: { icon: string };
    };
    expect(path.resolve(ROOT, config.directories.buildResources)).toBe(RESOURCES);
    expect((await image(ROOT, config.linux.icon)).width).toBe(512);
    // mac and win take icon.png from buildResources.
    expect(existsSync(path.join(RESOURCES, 'icon.png'))).toBe(true);
    const globs = config.files
      .filter((f) => !f.startsWith('!'))
      .map(
        (g) =>
          new RegExp(
            `^${g
              .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
              .replace(/\*\*/g, '.*')
              .replace(/(?<!\.)\*/g, '[^/]*')}$`,
          ),
      );
    for (const name of Object.keys(EXPECTED).filter((n) => n.startsWith('tray-'))) {
      expect(
        globs.some((g) => g.test(`electron/build-resources/${name}`)),
        `${name} is packaged`,
      ).toBe(true);
    }
  });

  const haveChromium = existsSync(CHROMIUM);
  if (!haveChromium && process.env.CI === 'true')
    throw new Error(`the icon test needs ${CHROMIUM} (Debian: apt-get install chromium)`);
  it.skipIf(!haveChromium)(
    're-renders the SVGs in Chromium into a chosen folder as the committed pictures',
    async () => {
      const out = await mkdtemp(path.join(tmpdir(), 'rb-icons-'));
      try {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [path.join(ROOT, 'scripts', 'render-icons.mjs'), out],
          { cwd: ROOT, timeout: 60_000 },
        );
        expect(stdout.trim().split('\n')).toHaveLength(Object.keys(EXPECTED).length);
        expect((await readdir(out)).sort()).toEqual(Object.keys(EXPECTED).sort());
        for (const name of Object.keys(EXPECTED)) {
          const fresh = await image(out, name);
          const committed = await image(RESOURCES, name);
          expect([fresh.width, fresh.height], name).toEqual([committed.width, committed.height]);
          // Another Chromium build may anti-alias a little differently; an edited SVG differs far more.
          expect(meanDifference(fresh, committed), name).toBeLessThan(3);
        }
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
  );
});
