// The analysis-only memory estimate (vramMetadata, blender/analysis/analyze_memory.py) against the
// peak Blender itself reports when it renders: a Suzanne whose subdivision is keyframed from level 0
// at frame 1 to level 4 at frame 10, with a generated image. The estimate must size the render at
// level 4 (the former one read frame 1's level 0, and was off by more than half on subdivision) and
// hold the real peak of the heaviest frame inside its band, within 30 %.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeScene, type SceneAnalysis } from '../../blender/analysis/analyze-scene.js';
import { buildFixture } from '../helpers/fixtures.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
let work: string;
let analysis: SceneAnalysis;
let file: string;

/** The peak Blender prints while it renders `frame` (Cycles' own on the CPU: `Mem:... (Peak N.NNM)`), bytes. */
async function reportedPeak(frame: number): Promise<number> {
  const { stdout } = await promisify(execFile)(
    BLENDER,
    ['-b', file, '-Y', '-o', join(work, 'f_####'), '-F', 'PNG', '-f', String(frame)],
    { maxBuffer: 32 * 1024 * 1024, timeout: 180_000 },
  );
  const peaks = [...stdout.matchAll(/Peak ([\d.]+)M/g)].map((m) => Number(m[1]) * 2 ** 20);
  expect(peaks.length, stdout.slice(-2000)).toBeGreaterThan(0);
  return Math.max(...peaks);
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-analyze-memory-'));
  file = await buildFixture('growing');
  analysis = await analyzeScene({ blender: BLENDER, file, workDir: work, timeoutMs: 120_000 });
}, 240_000);
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('memory estimate before any render', () => {
  it('sizes the subdivision at its highest keyframed level, not the level of frame 1', () => {
    const v = analysis.output.vramMetadata!;
    expect(v.schemaVersion).toBe(2);
    expect(v.riskFeatures.hasSubdivision).toBe(true);
    // Suzanne: 1,968 face corners; level 4 makes 1,968 x 4^3 quads, two triangles each.
    expect(v.geometry.triangleCount).toBe(2 * 1968 * 4 ** 3);
    expect(v.textures.estimatedBytes).toBe(512 * 512 * 4);
    expect(v.unsizedFeatures).toEqual([]);
  });

  it("holds the heaviest frame's reported peak inside its band, within 30 %", async () => {
    const v = analysis.output.vramMetadata!;
    const peak = await reportedPeak(10);
    expect(v.estimatedLowBytes!).toBeLessThanOrEqual(peak);
    expect(peak).toBeLessThanOrEqual(v.estimatedHighBytes!);
    expect(Math.abs(v.estimatedBytes! / peak - 1)).toBeLessThanOrEqual(0.3);
    // Frame 1 (level 0) peaks far lower: an estimate from frame 1's state would miss the render's peak.
    expect(await reportedPeak(1)).toBeLessThan(peak / 2);
  }, 240_000);
});
