// A pack is a snapshot: the artist keeps working after pressing Render, and the farm renders what
// was packed, or the submission says in one sentence which file changed and to pack again. Through
// the real daemon and the real service with its worker and real Blender (pack-snapshot-harness.ts);
// the frames are checked pixel by pixel. Saves during a slow upload are pack-snapshot-upload.test.ts.
import { mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { submissionNotification } from '../../electron/core/notifications.js';
import { buildPackProject, CELLS, mismatches } from '../helpers/pack-fixture.js';
import {
  absRed,
  expectPackChanged,
  frameColours,
  pack,
  settle,
  startSubmission,
  useSnapshotRig,
  wood,
} from './pack-snapshot-harness.js';

const rig = useSnapshotRig();

describe('a pack is a snapshot', () => {
  it('renders the packed texture after the artist renamed it between pack and submit', async () => {
    const project = await buildPackProject(path.join(rig.work, 'renamed'));
    const farm = await rig.startFarm('renamed');
    const packed = await pack(farm, project.main);
    expect(packed.files.some((f) => f.source === absRed(project))).toBe(true);
    // A sync tool tidies the folder: the texture outside the project gets another name.
    await rename(absRed(project), path.join(project.root, 'assets', 'wall texture.png'));
    const outDir = path.join(rig.work, 'renamed-out');
    const s = await settle(
      farm,
      await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] }, outDir }),
    );
    expect(s.error).toBeNull();
    expect(s.step).toBe('done');
    expect(mismatches(await frameColours(outDir))).toEqual({});
  }, 300_000);

  it(
    'fails at once naming a texture written in place after packing, says to pack again, and packing again ' +
      'renders it as repainted',
    async () => {
      const project = await buildPackProject(path.join(rig.work, 'in-place'));
      const farm = await rig.startFarm('in-place');
      const packed = await pack(farm, project.main);
      // Repainted and saved over the same file: new bytes under the packed path, same inode.
      await writeFile(wood(project), await readFile(absRed(project)));
      const s = await settle(farm, await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] } }));
      expectPackChanged(s, wood(project));
      expect(s.jobId).toBeNull();
      expect(s.upload?.retries ?? 0).toBe(0);
      // The add-on shows "NAME: message"; the tray, which has no job to report on, notifies it.
      const note = submissionNotification(s);
      expect(note?.body).toContain(wood(project));
      expect(note?.body).toMatch(/pack again/);
      // The stale pack is never sent: submitting it again says to pack again.
      const resent = await settle(
        farm,
        await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] } }),
      );
      expect(resent.step).toBe('failed');
      expect(resent.error?.name, JSON.stringify(resent.error)).toBe('DAEMON_NOT_FOUND');
      expect(resent.error?.message).toMatch(/pack the project again/);
      // Packing again takes a fresh snapshot: the frame shows the texture as repainted (wood now red).
      const repacked = await pack(farm, project.main);
      expect(repacked.packId).not.toBe(packed.packId);
      const woodBefore = packed.files.find((f) => f.source === wood(project));
      const woodNow = repacked.files.find((f) => f.source === wood(project));
      expect(woodNow?.sha256).not.toBe(woodBefore?.sha256);
      const outDir = path.join(rig.work, 'in-place-out');
      const done = await settle(
        farm,
        await startSubmission(farm, { packId: repacked.packId, settings: { frames: ['1'] }, outDir }),
      );
      expect(done.error).toBeNull();
      expect(done.step).toBe('done');
      const colours = await frameColours(outDir);
      expect(Object.keys(mismatches(colours))).toEqual(['wood']);
      const red = CELLS['absRed']?.rgb ?? [];
      expect(
        colours['wood']?.every((c, i) => Math.abs(c - (red[i] ?? -99)) <= 3),
        JSON.stringify(colours),
      ).toBe(true);
    },
    400_000,
  );

  it(
    'names a moved texture the daemon could not link (another filesystem) and says to pack again, never the ' +
      'service URL',
    async (ctx) => {
      const shm = '/dev/shm';
      const other = await stat(shm).catch(() => null);
      if (!other?.isDirectory() || other.dev === (await stat(rig.work)).dev) {
        if (process.env.CI === 'true') throw new Error(`${shm} is needed on another filesystem than ${rig.work}`);
        console.warn(`skipped: ${shm} is not another filesystem than ${rig.work}, so every file can be linked`);
        return ctx.skip();
      }
      const project = await buildPackProject(path.join(rig.work, 'elsewhere'));
      const daemonWork = await mkdtemp(path.join(shm, 'rb-pack-snapshot-'));
      try {
        const farm = await rig.startFarm('elsewhere', { daemonWork });
        const packed = await pack(farm, project.main);
        await rename(absRed(project), path.join(project.root, 'assets', 'wall texture.png'));
        const s = await settle(
          farm,
          await startSubmission(farm, { packId: packed.packId, settings: { frames: ['1'] } }),
        );
        expectPackChanged(s, absRed(project));
        expect(s.error?.message).toMatch(/moved or deleted/);
      } finally {
        await rig.closeFarm();
        await rm(daemonWork, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
