// Outputs stored while a job renders (early-outputs.ts) and finalize reusing them, on real
// filesystem storage: a frame stored early is not stored again and keeps its object; a frame
// rendered again since (a new file moved over it) and leftovers that are no output are replaced
// or removed; the published outputs are the same as without early storing.
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsObjectStorage } from '../../../service/adapters/fs-storage/fs-storage.js';
import { UrlSigner } from '../../../service/adapters/fs-storage/url-signer.js';
import {
  EarlyOutputs,
  frameOutputKey,
  compositeOutputKey,
  unchangedEarlyOutputs,
} from '../../../service/worker/outputs/early-outputs.js';
import { outputLayout } from '../../../service/worker/outputs/chunk-files.js';
import { finalizeOutputs, type ProducedFile } from '../../../service/worker/outputs/finalize-outputs.js';
import { jobOutputPrefix } from '../../../service/domain/output-keys.js';

let root: string;
let storage: FsObjectStorage;
const png = (seed: number) => Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(200, seed)]);

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-early-'));
  storage = new FsObjectStorage(path.join(root, 'objects'), new UrlSigner(randomBytes(32)), () => 'http://127.0.0.1:1');
  await storage.init();
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('early outputs', () => {
  it('are reused by finalize when their file is unchanged, and stored again when it was rendered again', async () => {
    const jobId = randomUUID();
    const jobDir = path.join(root, jobId);
    const out = outputLayout(jobDir);
    await mkdir(path.join(out.composite, 'FileOut'), { recursive: true });
    await mkdir(out.frames, { recursive: true });
    for (const n of [1, 2]) await writeFile(path.join(out.frames, `f_000${n}.png`), png(n));
    await writeFile(path.join(out.composite, 'FileOut', 'beauty_0001.png'), png(9));
    const prefix = jobOutputPrefix('ws', jobId);
    const early = new EarlyOutputs(storage, prefix, jobDir);
    await early.store(out, [
      { kind: 'camera', relativePath: 'f_0001.png' },
      { kind: 'camera', relativePath: 'f_0002.png' },
      { kind: 'composite', relativePath: 'FileOut/beauty_0001.png' },
    ]);
    expect((await storage.list(prefix)).map((o) => o.key)).toEqual([
      compositeOutputKey(prefix, 'FileOut/beauty_0001.png'),
      frameOutputKey(prefix, 'f_0001.png'),
      frameOutputKey(prefix, 'f_0002.png'),
    ]);
    // Frame 2 is rendered again (a retry): a new file moves over the one stored early.
    const again = path.join(root, 'again.png');
    await writeFile(again, png(42));
    await rename(again, path.join(out.frames, 'f_0002.png'));
    // A leftover of an interrupted attempt that is no output.
    await storage.put(`${prefix}/frames/stale.png`, Readable.from([png(7)]));
    const reuse = await unchangedEarlyOutputs(jobDir);
    expect([...reuse.keys()].map((f) => path.relative(out.outDir, f)).sort()).toEqual([
      path.join('composite', 'FileOut', 'beauty_0001.png'),
      path.join('frames', 'f_0001.png'),
    ]);

    const kept = storage.filePath(frameOutputKey(prefix, 'f_0001.png'));
    const before = await stat(kept);
    const files: ProducedFile[] = [
      { path: 'frames/f_0001.png', outputType: 'frame', view: null },
      { path: 'frames/f_0002.png', outputType: 'frame', view: null },
      {
        path: 'composite/FileOut/beauty_0001.png',
        outputType: 'composite',
        view: null,
        relativePath: 'FileOut/beauty_0001.png',
        compositeNodeName: 'FileOut',
      },
    ];
    // Early objects were stored unsynced: finalize persists the ones it reuses, in one batch, before it returns them.
    const persisted: string[][] = [];
    const watching = Object.assign(Object.create(storage) as FsObjectStorage, {
      persist: async (keys: readonly string[]) => {
        await storage.persist(keys);
        persisted.push([...keys]);
      },
    });
    const result = await finalizeOutputs({
      jobId,
      workspaceId: 'ws',
      outputDir: out.outDir,
      files,
      storage: watching,
      reuse,
      workDir: jobDir,
    });
    expect(persisted.map((keys) => [...keys].sort())).toEqual([
      [compositeOutputKey(prefix, 'FileOut/beauty_0001.png'), frameOutputKey(prefix, 'f_0001.png')].sort(),
    ]);
    // The reused object is the very one stored early; the re-rendered frame's object has its new bytes.
    expect((await stat(kept)).ino).toBe(before.ino);
    expect(result.outputs.frames.map((f) => [f.fileName, f.size])).toEqual([
      ['f_0001.png', png(1).length],
      ['f_0002.png', png(42).length],
    ]);
    expect((await readdir(path.dirname(kept))).sort()).toEqual(['f_0001.png', 'f_0002.png']);
    const stored2 = await storage.get(frameOutputKey(prefix, 'f_0002.png'));
    const chunks: Buffer[] = [];
    for await (const c of stored2) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(png(42))).toBe(true);
    expect(result.outputs.composites.map((f) => f.key)).toEqual([
      compositeOutputKey(prefix, 'FileOut/beauty_0001.png'),
    ]);
    expect(result.outputs.framesZipKey).not.toBeNull();
  });

  it('a stored file that is gone from out/ is not reused', async () => {
    const jobId = randomUUID();
    const jobDir = path.join(root, jobId);
    const out = outputLayout(jobDir);
    await mkdir(out.frames, { recursive: true });
    const file = path.join(out.frames, 'f_0001.png');
    await writeFile(file, png(1));
    await new EarlyOutputs(storage, jobOutputPrefix('ws', jobId), jobDir).store(out, [
      { kind: 'camera', relativePath: 'f_0001.png' },
    ]);
    await copyFile(file, `${file}.bak`);
    await rm(file);
    expect((await unchangedEarlyOutputs(jobDir)).size).toBe(0);
  });

  it('persist what they stored in background batches, once the batch interval has passed', async () => {
    const jobId = randomUUID();
    const jobDir = path.join(root, jobId);
    const out = outputLayout(jobDir);
    await mkdir(out.frames, { recursive: true });
    for (const n of [1, 2, 3]) await writeFile(path.join(out.frames, `f_000${n}.png`), png(n));
    const prefix = jobOutputPrefix('ws', jobId);
    const batches: string[][] = [];
    const watching = Object.assign(Object.create(storage) as FsObjectStorage, {
      persist: async (keys: readonly string[]) => {
        await storage.persist(keys);
        batches.push([...keys]);
      },
    });
    // An interval of an hour: nothing is persisted by these stores.
    const slow = new EarlyOutputs(watching, prefix, jobDir, { persistEveryMs: 3_600_000 });
    await slow.store(out, [{ kind: 'camera', relativePath: 'f_0001.png' }]);
    await slow.persisted();
    expect(batches).toEqual([]);
    // An interval of 0: each store persists what was stored since the last batch.
    const eager = new EarlyOutputs(watching, prefix, jobDir, { persistEveryMs: 0 });
    await eager.store(out, [
      { kind: 'camera', relativePath: 'f_0002.png' },
      { kind: 'camera', relativePath: 'f_0003.png' },
    ]);
    await eager.persisted();
    expect(batches).toEqual([[frameOutputKey(prefix, 'f_0002.png'), frameOutputKey(prefix, 'f_0003.png')]]);
    slow.close();
    eager.close();
  });
});
