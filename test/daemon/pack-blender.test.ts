// The daemon's tracer and packer with the worker's remap, end to end on disk with real Blender:
// the pack fixture is traced, packed, moved away (its absolute paths then lead nowhere), unzipped
// with Python's zipfile, and opened by the worker's analysis and render with the manifest's remaps.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACK_MANIFEST_NAME, type PackManifest } from '../../shared/pack/manifest.js';
import { packProject, type PackOutcome } from '../../daemon/pack/pack-project.js';
import { createTracer } from '../../daemon/trace.js';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { parseManifest } from '../../zip/manifest.js';
import {
  buildPackProject,
  cellColours,
  layOutByHand,
  mismatches,
  renderFrameOne,
  type PackProject,
  type RenderedFrame,
} from '../helpers/pack-fixture.js';

const run = promisify(execFile);
const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
let work: string;
let fixture: PackProject;
let packed: PackOutcome;
let handMade: PackManifest;
let root: string;
let manifest: PackManifest;
let analysis: SceneAnalysis;
let frame: RenderedFrame;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-pack-blender-'));
  fixture = await buildPackProject(join(work, 'src'));
  const traced = await createTracer({ blender: BLENDER })(fixture.main);
  packed = await packProject(
    { blendFile: fixture.main, dependencies: traced.dependencies },
    { zipPath: join(work, 'project.zip') },
  );
  handMade = await layOutByHand(fixture, join(work, 'hand'));
  await rename(join(work, 'src'), join(work, 'src-moved'));
  root = join(work, 'unzipped');
  await mkdir(root);
  await run('python3', [
    '-c',
    'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])',
    packed.zipPath,
    root,
  ]);
  manifest = parseManifest(await readFile(join(root, PACK_MANIFEST_NAME), 'utf8'));
  await mkdir(join(work, 'analysis'));
  analysis = await analyzeScene({
    blender: BLENDER,
    file: join(root, ...packed.sceneFile.split('/')),
    workDir: join(work, 'analysis'),
    timeoutMs: 120_000,
    pathRemaps: { root, remaps: manifest.remaps },
  });
  frame = await renderFrameOne({
    root,
    sceneFile: packed.sceneFile,
    remaps: manifest.remaps,
    scene: analysis,
    workDir: work,
  });
}, 300_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('trace + pack + worker remap', () => {
  it('packs the project rooted at proj/, with the remaps the worker needs and the missing file reported', () => {
    expect(packed.sceneFile).toBe('scenes/main.blend');
    const key = (r: { from: string; blendFile: string }) => `${r.blendFile} ${r.from}`;
    expect([...packed.manifest.remaps].sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      [...handMade.remaps].sort((a, b) => key(a).localeCompare(key(b))),
    );
    expect(packed.manifest.missing).toEqual([
      expect.objectContaining({ path: '//../textures/missing.png', kind: 'image', usedBy: ['IMmissing.png'] }),
    ]);
    expect(packed.warnings.map((w) => w.code)).toContain('MISSING_FILES');
    expect(manifest.remaps).toEqual(packed.manifest.remaps);
  });

  it('the unzipped project, with the remaps applied, misses nothing but the reported file', () => {
    expect(analysis.remap).toEqual({ remapped: manifest.remaps.length, failed: [], unused: 0 });
    expect(analysis.warnings.map((w) => w.code)).not.toContain('MISSING_LIBRARIES');
    expect(analysis.output.missingFiles).toEqual([['Image', 'missing.png', '//../textures/missing.png']]);
    expect(analysis.output.vramMetadata?.geometry.meshObjectCount).toBe(9);
  });

  it('renders every texture of the packed project, the linked ones included', async () => {
    expect(frame.result.exitCode, frame.result.lastLines.join('\n')).toBe(0);
    expect(mismatches(await cellColours(frame.png))).toEqual({});
  });
});
