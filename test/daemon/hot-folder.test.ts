// The hot folder with real chokidar on a temp folder, submitting to the real reference service
// (worker + Blender) through the real packer: a zip written slowly is taken once, only when
// complete, its outputs land beside it, and a restart does not submit it again.
import { copyFile, open, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Submission, SubmitRequest } from '../../shared/daemon/submission-schemas.js';
import { HOT_FOLDER_STATE_FILE, watchHotFolder, type HotFolderLogger } from '../../daemon/submit/hot-folder.js';
import type { ClientProvider, Packer } from '../../daemon/ports.js';
import { runSubmission } from '../../daemon/submit/run.js';
import { createSubmissions } from '../../daemon/submit/submissions.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { filesUnder, waitUntil, type E2E } from '../helpers/e2e.js';
import { startSubmitStack, type SubmitStack } from './harness.js';

let e2e: E2E;
let scratch: string;
let packer: Packer;
let clients: ClientProvider;
const logged: string[] = [];
const log: HotFolderLogger = {
  info: (obj, msg) => logged.push(`${msg} ${JSON.stringify(obj)}`),
  warn: (obj, msg) => logged.push(`WARN ${msg} ${JSON.stringify(obj)}`),
};

let stack: SubmitStack | undefined;

beforeAll(async () => {
  stack = await startSubmitStack('rb-hot-');
  ({ e2e, scratch, packer, clients } = stack);
}, 120_000);
afterAll(() => stack?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes `bytes` to `file` in `parts` chunks, `gapMs` apart, as a slow copy would. */
async function writeSlowly(
  file: string,
  bytes: Buffer,
  parts: number,
  gapMs: number,
  whileWriting: () => void,
): Promise<void> {
  const handle = await open(file, 'w');
  const step = Math.ceil(bytes.length / parts);
  for (let at = 0; at < bytes.length; at += step) {
    await handle.write(bytes.subarray(at, at + step));
    await handle.sync();
    whileWriting();
    await sleep(gapMs);
  }
  await handle.close();
}

describe('hot folder', () => {
  it(
    'submits a zip written slowly once, when complete, with outputs beside it; a restart does not submit it ' + 'again',
    async () => {
      const hot = path.join(scratch, 'hot');
      const source = path.join(scratch, 'shot.zip');
      await buildFixtureZip(['basic'], source);
      const bytes = await readFile(source);
      const submissions = createSubmissions({
        clients,
        packer,
        events: { publish: () => undefined },
        downloadsDir: path.join(scratch, 'unused'),
        pollMs: 200,
      });

      const watcher = await watchHotFolder(hot, { submissions, log, stabilityMs: 1000 });
      await watcher.ready;
      // Files that are never projects, or never finished ones.
      await writeFile(path.join(hot, 'shot.zip.part'), bytes.subarray(0, 1000));
      await writeFile(path.join(hot, 'scene.blend1'), 'backup');
      await writeFile(path.join(hot, '.~lock.scene.blend#'), 'lock');
      await writeFile(path.join(hot, 'notes.txt'), 'not a project');

      const zip = path.join(hot, 'shot.zip');
      let takenWhileWriting = 0;
      await writeSlowly(zip, bytes, 6, 400, () => (takenWhileWriting += submissions.list().length));
      expect(takenWhileWriting).toBe(0);

      const [sub] = await waitUntil(
        'the hot folder to submit the zip',
        () => submissions.list().length > 0 && submissions.list(),
        { timeoutMs: 15_000 },
      );
      const final = await submissions.settled(sub!.id);
      expect(final.error).toBeNull();
      expect(final).toMatchObject({
        step: 'done',
        path: zip,
        uploadedBytes: bytes.length,
        outDir: path.join(hot, 'shot_renders'),
      });
      // Default settings: the file's own frame range (1-24), every frame beside the zip.
      const frames = await filesUnder(path.join(hot, 'shot_renders'));
      expect(frames).toHaveLength(24);
      expect(frames[0]).toBe('f_0001.png');
      // Still one submission, and nothing taken from the ignored names: they were written before the
      // zip, so the watcher was done with them (stable for stabilityMs) before it took the zip.
      expect(submissions.list()).toHaveLength(1);
      await watcher.close();

      const remembered = JSON.parse(await readFile(path.join(hot, HOT_FOLDER_STATE_FILE), 'utf8')) as {
        submitted: Record<string, { size: number; submissionId: string }>;
      };
      expect(Object.keys(remembered.submitted)).toEqual(['shot.zip']);
      expect(remembered.submitted['shot.zip']).toMatchObject({ size: bytes.length, submissionId: final.id });

      // A restart (new watcher, new process state) with the file still there: not submitted again,
      // while a new file dropped after the restart is.
      const calls: SubmitRequest[] = [];
      const results: Submission[] = [];
      const submit = async (req: SubmitRequest) => {
        calls.push(req);
        const s = await runSubmission(
          req,
          { clients, packer, downloadsDir: path.join(scratch, 'unused'), pollMs: 200 },
          undefined,
          { noWait: true },
        );
        results.push(s);
        return s;
      };
      // The event that shows the new watcher looked at the file (stable, as the ignored ones beside it)
      // and left it: not a wait of some seconds, which passes whether or not it would submit again.
      const leftAsIs = (file: string) =>
        logged.filter((l) => l.startsWith('hot folder: already submitted') && l.includes(`"file":"${file}"`));
      const before = leftAsIs('shot.zip').length;
      const again = await watchHotFolder(hot, { submissions: submit, log, stabilityMs: 500 });
      await again.ready;
      await waitUntil('the restarted watcher to leave shot.zip as is', () => leftAsIs('shot.zip').length > before, {
        timeoutMs: 15_000,
      });
      expect(calls).toEqual([]);
      await copyFile(source, path.join(hot, 'second.zip'));
      await waitUntil('the second zip to be submitted', () => results.length > 0, { timeoutMs: 60_000 });
      await again.close();
      // The ignored names were there from the watcher's start, before second.zip: had they counted,
      // they would have been submitted first. second.zip is remembered, so it is never taken twice.
      const stateText = await readFile(path.join(hot, HOT_FOLDER_STATE_FILE), 'utf8');
      const state = JSON.parse(stateText) as { submitted: Record<string, { submissionId: string }> };
      expect(Object.keys(state.submitted).sort()).toEqual(['second.zip', 'shot.zip']);
      expect(state.submitted['second.zip']?.submissionId).toBe(results[0]!.id);
      expect(calls.map((c) => [c.pack?.path, c.outDir])).toEqual([
        [path.join(hot, 'second.zip'), path.join(hot, 'second_renders')],
      ]);
      expect(results[0]).toMatchObject({ step: 'rendering', error: null });
      // Free the render slot; the job may already have finished.
      await e2e.client.cancelJob(results[0]!.jobId!).catch(() => undefined);
      expect((await stat(path.join(hot, 'shot.zip'))).size).toBe(bytes.length);
      expect(logged.some((l) => l.startsWith('WARN'))).toBe(false);
    },
    240_000,
  );
});
