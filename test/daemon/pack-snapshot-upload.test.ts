// The artist keeps working during a slow upload: the .blend and a texture saved again while the pack
// is on its way, through a throttled link in a network namespace (needs root; skipped with a printed
// reason elsewhere, failing in CI). The farm renders the scene as packed, or the submission names the
// file that changed and says to pack again. Real daemon, service, worker and Blender
// (pack-snapshot-harness.ts).
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBlender } from '../../blender/run.js';
import { buildPackProject, mismatches, type PackProject } from '../helpers/pack-fixture.js';
import { startThrottledLink, throttledLinkUnavailable } from '../helpers/throttled-link.js';
import {
  absRed,
  expectPackChanged,
  frameColours,
  midUpload,
  settle,
  startSubmission,
  submissionOf,
  useSnapshotRig,
  wood,
  type Farm,
} from './pack-snapshot-harness.js';

const SAVES_SCRIPT = new URL('../fixtures/blend/build_snapshot_saves.py', import.meta.url).pathname;
const rig = useSnapshotRig();

describe('the artist keeps working during a slow upload', () => {
  const why = throttledLinkUnavailable();
  if (why && process.env.CI === 'true') throw new Error(why);
  if (why) console.warn(`skipped: ${why}`);

  /** The pack fixture with a 1.5 MB scene and its edited version; a farm behind a 2 Mbit/s link, parts of 64 KiB. */
  async function slowFarm(name: string): Promise<{ project: PackProject; f: Farm }> {
    const project = await buildPackProject(path.join(rig.work, name));
    const res = await runBlender({
      binary: process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender',
      pythonScript: SAVES_SCRIPT,
      scriptArgs: [project.root],
      timeoutMs: 120_000,
    });
    if (res.exitCode !== 0)
      throw new Error(`building the saved scene failed (exit ${res.exitCode}):\n${res.lastLines.join('\n')}`);
    const f = await rig.startFarm(name, { link: await startThrottledLink({ rateKbit: 2000 }), partSize: 64 * 1024 });
    return { project, f };
  }

  it.skipIf(why !== undefined)(
    'renders the scene as it was when Render was pressed, though the .blend and a texture were saved again meanwhile',
    async () => {
      const { project, f } = await slowFarm('saved');
      const outDir = path.join(rig.work, 'saved-out');
      const id = await startSubmission(f, { pack: { path: project.main }, settings: { frames: ['1'] }, outDir });
      await midUpload(f, id);
      // Saved as Blender saves (a new file renamed over the old): the AbsRed cell now shows wood.png.
      await rename(path.join(project.proj, 'scenes', 'main.saved.blend'), project.main);
      // wood.png repainted red by an editor that saves the same way.
      await writeFile(`${wood(project)}.tmp`, await readFile(absRed(project)));
      await rename(`${wood(project)}.tmp`, wood(project));
      expect((await submissionOf(f, id)).step).toBe('uploading');
      const s = await settle(f, id);
      expect(s.error).toBeNull();
      expect(s.step).toBe('done');
      // The AbsRed cell is red (the scene as packed), wood blue (the texture as packed).
      expect(mismatches(await frameColours(outDir))).toEqual({});
    },
    400_000,
  );

  it.skipIf(why !== undefined)(
    'a texture repainted in place during the upload: the packed texture renders, or the submission names it ' +
      'and says to pack again',
    async () => {
      const { project, f } = await slowFarm('repainted');
      const outDir = path.join(rig.work, 'repainted-out');
      const id = await startSubmission(f, { pack: { path: project.main }, settings: { frames: ['1'] }, outDir });
      await midUpload(f, id);
      // wood.png is sent after the scene's many parts; written in place, under the pack's link too.
      await writeFile(wood(project), await readFile(absRed(project)));
      const s = await settle(f, id);
      if (s.step === 'failed') {
        expectPackChanged(s, wood(project));
      } else {
        expect(s.step).toBe('done');
        expect(mismatches(await frameColours(outDir))).toEqual({});
      }
    },
    400_000,
  );
});
