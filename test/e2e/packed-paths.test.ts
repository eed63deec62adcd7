// A project whose .blend uses absolute paths and a library linked by absolute path, traced and
// packed by the daemon, then validated and rendered by the reference service after the original
// folder is gone: the worker's path remap makes the packed copies show in the pixels.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packProject } from '../../daemon/pack/pack-project.js';
import { createTracer } from '../../daemon/trace.js';
import { fetchBytes, startE2E, submit, tinyRender, validationOutcome, type E2E } from '../helpers/e2e.js';
import { buildPackProject, cellColours, mismatches } from '../helpers/pack-fixture.js';

let e2e: E2E;
let scratch: string;
let zip: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-packed-'));
  const fixture = await buildPackProject(path.join(scratch, 'src'));
  const traced = await createTracer({ blender: process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender' })(fixture.main);
  zip = (
    await packProject(
      { blendFile: fixture.main, dependencies: traced.dependencies },
      { zipPath: path.join(scratch, 'project.zip') },
    )
  ).zipPath;
  await rename(path.join(scratch, 'src'), path.join(scratch, 'src-moved'));
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('packed project with absolute paths', () => {
  it('validates with only the missing file reported, and renders the absolute and linked textures', async () => {
    const { client } = e2e;
    const job = await validationOutcome(client, await submit(client, zip));
    expect(job.status, JSON.stringify(job.failedReason)).toBe('validated');
    expect(job.analysis?.config.pathToFileForRender).toBe('scenes/main.blend');
    expect(job.analysis?.output?.missingFiles).toEqual([['Image', 'missing.png', '//../textures/missing.png']]);
    expect(job.analysis?.output?.analysisWarnings?.map((w) => w.code)).toEqual(['MISSING_FILES']);

    await client.renderJob(job.id, tinyRender('1'));
    const done = await client.waitForStatus(job.id, ['completed', 'failed'], { intervalMs: 150, timeoutMs: 90_000 });
    expect(done.failedReason ?? null).toBeNull();
    expect(done.finalConfig?.analysisWarnings?.map((w) => w.code)).not.toContain('RENDER_SETUP_WARNING');
    const frames = (await client.getDownloads(job.id)).frameOutputs ?? [];
    const png = path.join(scratch, 'f_0001.png');
    await writeFile(png, await fetchBytes(frames[0]!.url));
    // Red (absolute), green, orange and yellow (the library's own,
    // absolute and out-of-project) cells, magenta for the missing file.
    expect(mismatches(await cellColours(png))).toEqual({});
  }, 180_000);
});
