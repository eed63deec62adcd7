// Issue 13, defect 7: a .blend uploaded as "Szene ärger 01.blend" showed as
// "Szene__rger_01.blend" in sceneFile.name and analysis.output.fileName once validated, and
// "a b.blend" and "a_b.blend" collapsed into one name. Only the path on disk is made safe; every
// name a user sees is the one they gave. Real service, in-process worker and Blender.
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesUnder, startE2E, submit, tinyRender, validationOutcome, workDirOf, type E2E } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';

// Each name in its own folder: the client uploads a file under its own name.
const NAMES = ['Szene ärger 01.blend', 'My Scene.blend', 'a b.blend', 'a_b.blend'];

let e2e: E2E;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-names-'));
  e2e = await startE2E();
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
  await rm(scratch, { recursive: true, force: true });
});

/** A copy of the basic fixture called `name`. */
async function sceneCalled(name: string, i: number): Promise<string> {
  const dir = path.join(scratch, String(i));
  await mkdir(dir);
  const file = path.join(dir, name);
  await copyFile(await buildFixture('basic'), file);
  return file;
}

describe('the names of uploaded .blend files', () => {
  it(
    'are shown exactly as given after validation and render, while the file on disk has a safe name',
    { timeout: 400_000 },
    async () => {
      const { client, svc } = e2e;
      // All submitted first: the one render slot validates them in turn.
      const ids: string[] = [];
      for (const [i, name] of NAMES.entries()) ids.push(await submit(client, await sceneCalled(name, i)));

      for (const [i, name] of NAMES.entries()) {
        const job = await validationOutcome(client, ids[i]!);
        expect(job.status, `${name}: ${JSON.stringify(job.failedReason)}`).toBe('validated');
        expect(job.sceneFile?.name).toBe(name);
        expect(job.analysis?.output?.fileName).toBe(name);
        expect(job.analysis?.config.pathToFileForRender).toBe(name);
        expect(job.analysis?.output?.pathToFileForRender).toBe(name);
        // On the worker the upload is a plain ASCII name, whatever the client called it.
        expect(await filesUnder(path.join(workDirOf(svc, ids[i]!), 'project'))).toEqual(['scene.blend']);
      }
      // "a b" and "a_b" stay two names.
      const shown = await Promise.all(ids.map(async (id) => (await client.getJob(id)).sceneFile?.name));
      expect(new Set(shown).size).toBe(NAMES.length);

      // The render finds the file under its safe name and reports the given one.
      await client.renderJob(ids[0]!, tinyRender('1'));
      const done = await client.waitForStatus(ids[0]!, ['completed', 'failed'], {
        intervalMs: 250,
        timeoutMs: 180_000,
      });
      expect(done.status, JSON.stringify(done.failedReason)).toBe('completed');
      expect(done.finalConfig?.pathToFileForRender).toBe(NAMES[0]);
      expect(done.sceneFile?.name).toBe(NAMES[0]);
    },
  );

  it(
    'a client that names the bare .blend in pathToFileForRender gets it by its own name',
    { timeout: 200_000 },
    async () => {
      const name = 'Szene ärger 02.blend';
      const id = await submit(e2e.client, await sceneCalled(name, NAMES.length), { pathToFileForRender: name });
      const job = await validationOutcome(e2e.client, id);
      expect(job.status, JSON.stringify(job.failedReason)).toBe('validated');
      expect(job.sceneFile?.name).toBe(name);
      expect(job.analysis?.output?.fileName).toBe(name);
    },
  );
});
