// The analysis cache around the real analysis: real Blender builds, the real SQL store on SQLite,
// a project laid out as a job's folder. What the key covers is observed by whether Blender ran
// (a count of analyses started): the same project in another job's folder of the same workspace
// is answered from the cache, its paths those of the new folder; another workspace, another
// Blender build, a file moved or resized are analysed again.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeScene, type AnalyzeSceneOptions } from '../../../blender/analysis/analyze-scene.js';
import { probeBuilds } from '../../../blender/builds.js';
import type { BlenderBuild } from '../../../blender/builds.js';
import { SqlAnalysisCache } from '../../../service/adapters/sql/analysis-cache.js';
import { openSqlite, type SqliteHandle } from '../../../service/adapters/sqlite/db.js';
import { analyzeWithCache } from '../../../service/worker/analysis-cache/cached-analysis.js';
import type { PreparedProject } from '../../../service/worker/project/job-files.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { testBuild, usableBuilds } from '../../helpers/blender-builds.js';

let dir: string;
let db: SqliteHandle;
let store: SqlAnalysisCache;
let scene: string;
let builds: BlenderBuild[];
let jobs = 0;
let runs = 0;
const log = { info: () => undefined, warn: (o: object, m: string) => console.warn(m, o) };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-analysis-cache-'));
  db = await openSqlite(path.join(dir, 'db.sqlite'));
  store = new SqlAnalysisCache(db.db);
  scene = await buildFixture('basic');
  const wanted = usableBuilds('analysis cache').filter((b) => b.minor === '3.4' || b.minor === '4.3');
  builds = (await probeBuilds(wanted.map((b) => ({ binary: b.path, source: 'config' as const })))).builds;
}, 120_000);
afterAll(async () => {
  await db?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A job's folder holding scene.blend and textures/wood.png (`textureBytes` of it). */
async function jobFolder(texture: Buffer, texturePath = 'textures/wood.png'): Promise<PreparedProject> {
  const jobDir = path.join(dir, `job-${++jobs}`);
  const root = path.join(jobDir, 'project');
  await mkdir(path.join(root, path.dirname(texturePath)), { recursive: true });
  await copyFile(scene, path.join(root, 'scene.blend'));
  await writeFile(path.join(root, texturePath), texture);
  return { jobDir, root, files: ['scene.blend', texturePath], manifest: null };
}

async function analyse(project: PreparedProject, workspaceId = 'ws-studio', build = builds[0]!) {
  const options: AnalyzeSceneOptions = {
    blender: build.binary,
    file: path.join(project.root, 'scene.blend'),
    workDir: project.jobDir,
    timeoutMs: 120_000,
    pathToFileForRender: 'scene.blend',
    shownName: 'scene.blend',
    pathRemaps: { root: project.root, remaps: [] },
  };
  const analyze = (o: AnalyzeSceneOptions) => {
    runs++;
    return analyzeScene(o);
  };
  return analyzeWithCache({ store, workspaceId, build, project, log, analyze }, options);
}

describe('the analysis cache', () => {
  it('answers the same project in another job folder without Blender, and never for another workspace', async () => {
    const texture = randomBytes(4096);
    const first = await analyse(await jobFolder(texture));
    expect(first.cache).toBe('miss');
    expect(runs).toBe(1);
    const again = await jobFolder(texture);
    const second = await analyse(again);
    expect(second.cache).toBe('hit');
    expect(runs).toBe(1);
    expect(second.analysis.output).toEqual(first.analysis.output);
    expect(second.analysis.warnings).toEqual(first.analysis.warnings);
    // Nothing of the first job's folder leaks into the answer for the second.
    expect(JSON.stringify(second.analysis)).not.toContain(path.join(dir, 'job-1'));

    const elsewhere = await analyse(await jobFolder(texture), 'ws-other');
    expect(elsewhere.cache).toBe('miss');
    expect(runs).toBe(2);
  }, 120_000);

  it('analyses again when a project file is resized or moved; changed bytes of the same size go unread', async () => {
    const texture = randomBytes(2048);
    expect((await analyse(await jobFolder(texture))).cache).toBe('miss');
    const before = runs;
    expect((await analyse(await jobFolder(randomBytes(2049)))).cache).toBe('miss');
    expect((await analyse(await jobFolder(texture, 'maps/wood.png'))).cache).toBe('miss');
    expect(runs).toBe(before + 2);
    // The analysis reads a texture's size, not its bytes: new bytes of the same size reuse it.
    expect((await analyse(await jobFolder(randomBytes(2048)))).cache).toBe('hit');
    expect(runs).toBe(before + 2);
    // A .blend with other bytes of the same size is analysed again (its last byte, in the ENDB
    // block's header after the last data block, is read by nobody).
    const changed = await jobFolder(texture);
    const blend = path.join(changed.root, 'scene.blend');
    const bytes = await readFile(blend);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 1, bytes.length - 1);
    await writeFile(blend, bytes);
    expect((await analyse(changed)).cache).toBe('miss');
  }, 240_000);

  it.skipIf(testBuild('4.3').missing !== undefined)(
    'analyses again with another Blender build, then reuses that build’s analysis',
    async () => {
      const [b34, b43] = [builds.find((b) => b.version.minor === 4), builds.find((b) => b.version.minor === 3)];
      expect(b34 && b43).toBeTruthy();
      const texture = randomBytes(1024);
      expect((await analyse(await jobFolder(texture), 'ws-builds', b34)).cache).toBe('miss');
      const before = runs;
      const on43 = await analyse(await jobFolder(texture), 'ws-builds', b43);
      expect(on43.cache).toBe('miss');
      expect(runs).toBe(before + 1);
      expect(on43.analysis.blenderVersion?.minor).toBe(3);
      expect((await analyse(await jobFolder(texture), 'ws-builds', b43)).cache).toBe('hit');
      expect(runs).toBe(before + 1);
    },
    240_000,
  );
});
