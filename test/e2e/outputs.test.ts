// What a user downloads for scenes beyond the plain one, through the public API with real
// Blender: File Output node files (listed per node, zipped), stereo views, and a file whose own
// Python (text block, driver) must never run on the farm.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, fixtureMarker } from '../helpers/fixtures.js';
import { fetchBytes, startE2E, submit, tinyRender, validationOutcome, type E2E } from '../helpers/e2e.js';
import { pngDistinctBytes, pngInfo } from '../helpers/png.js';

const run = promisify(execFile);
let e2e: E2E;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-out-'));
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

async function renderToCompletion(file: string, frames: string) {
  const { client } = e2e;
  const id = await submit(client, file);
  expect((await validationOutcome(client, id)).status).toBe('validated');
  await client.renderJob(id, tinyRender(frames));
  const done = await client.waitForStatus(id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
  return { id, done, downloads: await client.getDownloads(id) };
}

describe('compositor File Output nodes', () => {
  it('lists each node file with its node and relative path, zips them, and the frames are real images', async () => {
    const { done, downloads } = await renderToCompletion(await buildFixture('compositor'), '1-3');
    expect(done.finalConfig?.expectedOutputs?.totals.compositeFiles).toBeGreaterThan(0);

    const composites = downloads.compositeNodeOutputs ?? [];
    const expected = [1, 2, 3].flatMap((f) => {
      const n = String(f).padStart(4, '0');
      return [`FileOut/beauty_${n}.png`, `FileOut/mask${n}.png`];
    });
    expect(composites.map((c) => c.relativePath).sort()).toEqual([...expected].sort());
    for (const c of composites) {
      expect(c).toMatchObject({ outputType: 'composite', compositeNodeName: 'FileOut', view: null });
      expect(c.fileName).toBe(path.posix.basename(c.relativePath!));
    }
    expect(downloads.compositeNodes).toHaveLength(expected.length);

    // The composite zip holds the same files under their node folder.
    const zipUrl = downloads.transforms?.compositeNodesZip;
    expect(typeof zipUrl).toBe('string');
    const zipFile = path.join(scratch, 'composites.zip');
    await writeFile(zipFile, await fetchBytes(zipUrl as string));
    const listing = (await run('unzip', ['-Z1', zipFile])).stdout.trim().split('\n').sort();
    expect(listing).toEqual([...expected].sort());

    // Camera frames are still there, and are pictures, not flat fills.
    const frames = downloads.frameOutputs ?? [];
    expect(frames.map((f) => f.fileName)).toEqual(['f_0001.png', 'f_0002.png', 'f_0003.png']);
    for (const f of frames) {
      const png = await fetchBytes(f.url);
      expect([pngInfo(png).width, pngInfo(png).height]).toEqual([64, 48]);
      expect(pngDistinctBytes(png)).toBeGreaterThan(2);
    }
    const beauty = await fetchBytes(composites.find((c) => c.relativePath === 'FileOut/beauty_0001.png')!.url);
    expect(pngDistinctBytes(beauty)).toBeGreaterThan(2);
  }, 240_000);
});

describe('stereo', () => {
  it('delivers a left and a right file per frame, each with its view', async () => {
    const { done, downloads } = await renderToCompletion(await buildFixture('stereo'), '1-2');
    expect(done.finalConfig?.expectedOutputs?.viewMultiplier).toBe(2);
    expect(done.finalConfig?.expectedOutputs?.totals.cameraFiles).toBe(4);
    const frames = downloads.frameOutputs ?? [];
    expect(frames.map((f) => [f.fileName, f.view]).sort()).toEqual([
      ['f_0001_L.png', 'L'],
      ['f_0001_R.png', 'R'],
      ['f_0002_L.png', 'L'],
      ['f_0002_R.png', 'R'],
    ]);
    for (const f of frames) expect(f.outputType).toBe('frame');
  }, 240_000);
});

describe('a file with its own Python', () => {
  it('validates and renders without ever running the text block or the driver', async () => {
    const marker = fixtureMarker();
    const blend = await buildFixture('autoexec');
    // Building the fixture runs its own Python in the builder only; start from a clean slate.
    await rm(marker, { force: true });
    await rm(`${marker}.driver`, { force: true });
    const { downloads } = await renderToCompletion(blend, '1');
    expect(downloads.frameOutputs?.map((f) => f.fileName)).toEqual(['f_0001.png']);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(`${marker}.driver`)).toBe(false);
  }, 240_000);
});
