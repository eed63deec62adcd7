// Frames the planner copies into a job (from the job it was requeued from, or from its estimate's
// kept frames: both through copyFrameFiles) are on the disk when the copy returns, before planning
// completes: planning counts them done and no task renders them again, so a power loss after it
// must not take them. Seen with cachestat(2) on the real file storage and a real disk: no page of a
// copied file is left to write back (the kernel's own write-back would take up to 30 s).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputLayout } from '../../../service/worker/outputs/chunk-files.js';
import { copyFrameFiles, type SourceFile } from '../../../service/worker/outputs/kept-frames.js';
import { cannotCheckPages, unwrittenPages } from '../../helpers/page-cache.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = await mkdtemp(path.join(svc.config.dataDir, 'copied-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await svc.close();
});

describe('frames copied by the planner', () => {
  it('are written to the disk, with no page left to write, when the copy returns', async () => {
    const why = await cannotCheckPages(dir, import.meta.filename);
    if (why) {
      if (process.env.CI === 'true') throw new Error(`cannot check the page cache here: ${why}`);
      console.log(`skipped: ${why}`);
      return;
    }
    const storage = svc.service.ports.storage;
    const prefix = `test/${randomUUID()}/kept`;
    // Camera files of frames 1-4 and a compositor file of frame 2; frame 4 is not asked for.
    const files: SourceFile[] = [
      ...[1, 2, 3, 4].map((f) => ({ key: `${prefix}/frames/f${f}`, area: 'frames' as const, rel: `f_000${f}.png` })),
      { key: `${prefix}/composite/c2`, area: 'composite', rel: 'Output/c_0002.exr' },
    ];
    for (const f of files) await storage.put(f.key, Readable.from([randomBytes(512 * 1024)]));

    const out = outputLayout(path.join(dir, randomUUID()));
    expect(await copyFrameFiles(storage, files, new Set([1, 2, 3]), { out })).toBe(4);
    const copied = [1, 2, 3].map((f) => path.join(out.frames, `f_000${f}.png`));
    copied.push(path.join(out.composite, 'Output', 'c_0002.exr'));
    expect(await unwrittenPages(copied)).toEqual([0, 0, 0, 0]);
  });
});
