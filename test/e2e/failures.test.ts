// Validation outcomes a user acts on, through the public API with real Blender: warnings that
// do not block, scenes that cannot render, archives that need a choice, and hostile archives.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, buildFixtureZip } from '../helpers/fixtures.js';
import { filesUnder, startE2E, submit, validationOutcome, waitUntil, workDirOf, type E2E } from '../helpers/e2e.js';

const run = promisify(execFile);
let e2e: E2E;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-e2e-fail-'));
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

interface Warning {
  code: string;
  blocking: boolean;
  message: string;
}

describe('scene warnings', () => {
  it('a missing texture is a warning that names the file, and the job still validates', async () => {
    const { client } = e2e;
    const job = await validationOutcome(client, await submit(client, await buildFixture('missing-texture')));
    expect(job.status).toBe('validated');
    expect(job.failedReason ?? null).toBeNull();
    const out = job.analysis?.output;
    const warnings = (out?.analysisWarnings ?? []) as Warning[];
    const missing = warnings.find((w) => w.code === 'MISSING_FILES');
    expect(missing).toMatchObject({ blocking: false });
    expect(missing?.message).toContain('MissingTex');
    expect(warnings.filter((w) => w.blocking)).toEqual([]);
    // The missing path itself is listed, so the user knows what to pack or include.
    const listed = (out?.missingFiles ?? []).flat().join('\n');
    expect(listed).toContain('does-not-exist.png');
    expect(listed).toMatch(/textures[\\/]does-not-exist\.png/);
    // Blender's own report names it as it lies in the upload, not where the farm unpacked it.
    const report = out?.hostMissingFilesReport ?? [];
    expect(report.some((l) => l.includes("'textures/does-not-exist.png'"))).toBe(true);
    expect(JSON.stringify(job)).not.toContain(e2e.svc.dataDir);
  }, 120_000);

  it('a scene without a camera fails validation with the blocking warnings', async () => {
    const { client } = e2e;
    const job = await validationOutcome(client, await submit(client, await buildFixture('odd')));
    expect(job.status).toBe('failed');
    expect(job.failedReason?.type).toBe('VALIDATION_FAILED');
    const warnings = (job.failedReason?.errorDetails.warnings ?? []) as Warning[];
    const codes = warnings.map((w) => w.code);
    expect(codes).toContain('NO_CAMERA');
    expect(codes).toContain('MISSING_LIBRARIES');
    expect(warnings.every((w) => w.blocking)).toBe(true);
    expect(String(job.failedReason?.errorDetails.message)).toMatch(/camera/i);
    // The full analysis stays readable, non-blocking warnings included.
    expect(job.analysis?.output?.analysisWarnings?.length).toBeGreaterThanOrEqual(warnings.length);
  }, 120_000);
});

describe('archives', () => {
  it('with two .blend files, asks for a choice, then validates the one chosen', async () => {
    const { client } = e2e;
    const zip = path.join(scratch, 'two-scenes.zip');
    const entries = await buildFixtureZip(['basic', 'compositor'], zip, 'shot');
    expect(entries).toEqual(['shot/basic.blend', 'shot/compositor.blend']);

    const ambiguous = await validationOutcome(client, await submit(client, zip));
    expect(ambiguous.status).toBe('failed');
    expect(ambiguous.failedReason).toMatchObject({ type: 'VALIDATION_FAILED', name: 'SCENE_FILE_AMBIGUOUS' });
    expect(ambiguous.failedReason?.errorDetails.choices).toEqual(entries);
    expect(String(ambiguous.failedReason?.errorDetails.message)).toContain('pathToFileForRender');

    const chosen = await validationOutcome(
      client,
      await submit(client, zip, { pathToFileForRender: 'shot/compositor.blend' }),
    );
    expect(chosen.status).toBe('validated');
    expect(chosen.sceneFile).toMatchObject({ name: 'compositor.blend', isSceneFile: true });
    expect(chosen.analysis?.config?.pathToFileForRender).toBe('shot/compositor.blend');
    expect(chosen.analysis?.output?.pathToFileForRender).toBe('shot/compositor.blend');
  }, 120_000);

  it('refuses an entry that climbs out of the project, writing nothing outside', async () => {
    const { client, svc } = e2e;
    const zip = path.join(scratch, 'hostile.zip');
    const blend = await buildFixture('basic');
    // Python's zipfile keeps `..` in names it writes (only extraction sanitises them).
    const script = [
      'import sys, zipfile',
      'with zipfile.ZipFile(sys.argv[1], "w") as z:',
      '    z.write(sys.argv[2], "scene.blend")',
      '    z.writestr("../evil.txt", "pwned")',
      '    z.writestr("../../evil-deep.txt", "pwned")',
    ].join('\n');
    await run('python3', ['-c', script, zip, blend]);
    expect((await run('unzip', ['-Z1', zip])).stdout).toContain('../evil.txt');
    const parent = path.dirname(svc.dataDir);
    const before = new Set(await readdir(parent));

    const id = await submit(client, zip);
    const job = await validationOutcome(client, id);
    expect(job.status).toBe('failed');
    expect(job.failedReason).toMatchObject({ type: 'VALIDATION_FAILED', name: 'ZIP_PATH_TRAVERSAL' });
    expect(job.failedReason?.errorDetails.entry).toBe('../evil.txt');

    // Nowhere in the service's data folder, nor beside it.
    const everywhere = await filesUnder(svc.dataDir);
    expect(everywhere.filter((f) => f.includes('evil'))).toEqual([]);
    const after = await readdir(parent);
    expect(after.filter((n) => n.includes('evil') && !before.has(n))).toEqual([]);
    expect(existsSync(path.join(parent, 'evil.txt'))).toBe(false);
    expect(existsSync(path.join(path.dirname(parent), 'evil-deep.txt'))).toBe(false);
    // The refused job leaves no working folder behind.
    await waitUntil('the failed job folder to go', () => !existsSync(workDirOf(svc, id)), { timeoutMs: 10_000 });
  }, 120_000);
});
