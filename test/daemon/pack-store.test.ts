// The disk a pack's snapshot uses (daemon/pack/snapshot.ts), seen as a user of the machine would:
// its .blend files are real copies (one link each), every other file a hard link to the artist's
// own (a second link on it, no bytes), all of it gone once the pack is discarded; copies past the
// packer's bound fail the pack saying what to do; and what a stopped daemon left in the work
// folder is removed at the next start, while anything else there is left alone. Real files in
// temp folders, real packer (dependencies given, so no Blender).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { readdir } from 'node:fs/promises';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPacker } from '../../daemon/pack/packer.js';
import type { TraceFn } from '../../daemon/ports.js';
import type { PackRequest } from '../../shared/daemon/submission-schemas.js';
import { dep, packFailure, put, textBytes } from './pack-helpers.js';

const noTrace: TraceFn = () => Promise.reject(new Error('the packer traced although the dependencies were given'));

let base: string;
let workDir: string;
let main: string;
let wood: string;
let lib: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-pack-store-'));
  workDir = join(base, 'work');
  main = put(join(base, 'proj', 'shot.blend'), Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(300_000)]));
  wood = put(join(base, 'proj', 'tex', 'wood.png'), randomBytes(200_000));
  lib = put(
    join(base, 'proj', 'libs', 'props.blend'),
    Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(100_000, 3)]),
  );
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function request(): PackRequest {
  return {
    path: main,
    dependencies: [
      dep({ path: '//tex/wood.png', absolute: wood, kind: 'image', blendFile: main }),
      dep({ path: '//libs/props.blend', absolute: lib, kind: 'library', blendFile: main }),
    ],
  };
}

describe('the pack store on disk', () => {
  it('copies the .blend files, links the rest, and frees it all when the pack is discarded', async () => {
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test' });
    const pack = await packer.pack(request());
    const held = join(workDir, pack.packId, 'files');
    const links = (await readdir(held, { recursive: true }))
      .map((n) => statSync(join(held, n)))
      .filter((s) => s.isFile());
    // Two .blend copies (one link each, their own bytes) and the texture's link (the artist's file, now two links).
    expect(
      links
        .filter((s) => s.nlink === 1)
        .map((s) => s.size)
        .sort((a, b) => a - b),
    ).toEqual([statSync(lib).size, statSync(main).size].sort((a, b) => a - b));
    expect(statSync(wood).nlink).toBe(2);
    expect(links.some((s) => s.ino === statSync(wood).ino)).toBe(true);
    await packer.discard(pack.packId);
    expect(existsSync(join(workDir, pack.packId))).toBe(false);
    expect(statSync(wood).nlink).toBe(1);
  });

  it('fails a pack whose .blend copies pass the bound, saying what to do, and leaves nothing behind', async () => {
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test', maxCopiedBytes: statSync(main).size });
    const err = await packFailure(packer.pack(request()));
    expect(err.message).toMatch(
      /do not fit in the daemon's pack store .*: submit or discard the waiting packs, then pack again/,
    );
    expect(await readdir(workDir)).toEqual([]);
  });

  it('holds the bound when two packs are taken at once: one fits, the other fails saying what to do', async () => {
    // Room for the copies of one pack, not two; neither pack is kept when the other starts.
    const one = statSync(main).size + statSync(lib).size;
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test', maxCopiedBytes: Math.floor(one * 1.5) });
    const both = await Promise.allSettled([packer.pack(request()), packer.pack(request())]);
    const packed = both.filter(
      (r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof packer.pack>>> => r.status === 'fulfilled',
    );
    const failed = both.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(packed).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect((failed[0]?.reason as Error).message).toMatch(
      /do not fit in the daemon's pack store .*: submit or discard the waiting packs, then pack again/,
    );
    // Only the pack that fit is on disk; once it is discarded, its room is free again.
    expect(await readdir(workDir)).toEqual([packed[0]?.value.packId]);
    await packer.discard(packed[0]?.value.packId as string);
    const again = await packer.pack(request());
    await packer.discard(again.packId);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('packs an unchanged .blend again from the copy a waiting pack holds; copies it afresh once saved', async () => {
    // Saved a while ago: its copy cannot hold a save that landed within the timestamp resolution.
    const past = new Date(Date.now() - 60_000);
    utimesSync(main, past, past);
    utimesSync(lib, past, past);
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test' });
    const copyOf = (packId: string, blend: string) => {
      const held = join(workDir, packId, 'files', 'c');
      const size = statSync(blend).size;
      const found = readdirSync(held)
        .map((n) => statSync(join(held, n)))
        .filter((st) => st.size === size);
      expect(found, `${blend} in ${packId}`).toHaveLength(1);
      return found[0] as Stats;
    };
    const first = await packer.pack(request());
    const second = await packer.pack(request());
    // One copy on disk for both packs (two links to it), none of them the artist's file.
    expect(copyOf(second.packId, main).ino).toBe(copyOf(first.packId, main).ino);
    expect(copyOf(second.packId, main).nlink).toBe(2);
    expect(copyOf(second.packId, main).ino).not.toBe(statSync(main).ino);
    expect(second.files.map((f) => f.sha256)).toEqual(first.files.map((f) => f.sha256));
    // The first pack goes (sent or discarded): the second keeps its scene.
    await packer.discard(first.packId);
    expect(copyOf(second.packId, main).nlink).toBe(1);
    // Saved again as Blender saves (a new file renamed over the old): the next pack copies it anew.
    writeFileSync(`${main}.tmp`, Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(300_000, 7)]));
    renameSync(`${main}.tmp`, main);
    const third = await packer.pack(request());
    expect(copyOf(third.packId, main).ino).not.toBe(copyOf(second.packId, main).ino);
    expect(third.files.find((f) => f.source === main)?.sha256).not.toBe(
      second.files.find((f) => f.source === main)?.sha256,
    );
    // The library did not change: still the one copy.
    expect(copyOf(third.packId, lib).ino).toBe(copyOf(second.packId, lib).ino);
  });

  it('removes what a stopped daemon left in the work folder at the first pack, and nothing else', async () => {
    const stale = randomUUID();
    put(join(workDir, stale, 'files', '0.blend'), 'old copy');
    put(join(workDir, `${stale}.zip`), 'old zip');
    mkdirSync(join(workDir, 'notes'), { recursive: true });
    const packer = createPacker({ workDir, trace: noTrace, createdBy: 'test' });
    const pack = await packer.pack(request());
    expect((await readdir(workDir)).sort()).toEqual([pack.packId, 'notes'].sort());
  });
});
