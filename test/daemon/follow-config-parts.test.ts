// The daemon applies every edit of config.toml without a restart, with its real parts (startBridgeDaemon)
// against a real service with a worker: a new hot folder is watched and the old one let go (real
// files dropped into each), the new downloads folder takes the next download, the new Blender
// the next trace, and the profile's defaults reach what the hot folder submits.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { loadDaemonConfig } from '../../daemon/config.js';
import { createDaemonLogger } from '../../daemon/http/logging.js';
import { PackResult, Submission } from '../../shared/daemon/submission-schemas.js';
import { buildFixture, buildFixtureZip } from '../helpers/fixtures.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';

let e2e: E2E;
let root: string;
let daemon: RunningBridgeDaemon | undefined;

beforeAll(async () => {
  e2e = await startE2E();
  root = await mkdtemp(path.join(tmpdir(), 'rb-follow-parts-'));
}, 120_000);
afterAll(async () => {
  await daemon?.close();
  await e2e?.svc.close();
  await rm(root, { recursive: true, force: true });
});

/** Folders as absolute paths under the test's root (a `~/` would be this machine's real home). */
function profile(origin: string, hot: string, out: string, blender: string): string {
  return `[profiles.default]
serviceUrl = "${origin}"
hotFolder = "${path.join(root, hot)}"
downloadsDir = "${path.join(root, out)}"
blender = "${blender}"

[profiles.default.overrides]
frameRanges = ["1"]
sampleCount = 2
resolution = [64, 48]
`;
}

describe('config.toml edits reach every part of the running daemon', () => {
  it('re-watches the hot folder, and takes the new downloads folder and Blender at their next use', async () => {
    const env = { XDG_CONFIG_HOME: path.join(root, 'config') };
    const file = path.join(root, 'config', 'renderbridge', 'config.toml');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, profile(e2e.svc.origin, 'hot-a', 'out-a', 'blender'));
    const overrides = {
      port: 0,
      stateDir: path.join(root, 'state'),
      workDir: path.join(root, 'packs'),
      pollActiveMs: 250,
      pollIdleMs: 1000,
      webhookSecret: null,
    };
    const reloadConfig = () => loadDaemonConfig(env, {}, undefined, overrides);
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logs.push(chunk.toString());
        cb();
      },
    });
    daemon = await startBridgeDaemon(reloadConfig(), {
      keychain: null,
      env: { RENDERBRIDGE_API_KEY: e2e.svc.apiKey },
      logger: createDaemonLogger('info', sink),
      reloadConfig,
      version: '1.2.3-test',
    });
    const d = daemon;
    await d.hotFolder!.ready;
    const headers = { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' };
    const submissions = async (): Promise<Submission[]> =>
      (
        (await (await fetch(`${d.origin}/submissions`, { headers })).json()) as { submissions: unknown[] }
      ).submissions.map((s) => Submission.parse(s));

    const firstWatcher = d.hotFolder;
    await writeFile(file, profile(e2e.svc.origin, 'hot-b', 'out-b', path.join(root, 'no-such-blender')));
    await waitUntil('the new hot folder', () => d.hotFolder !== firstWatcher && d.hotFolder !== null, {
      timeoutMs: 15_000,
    });
    await d.hotFolder!.ready;
    expect(logs.join('')).toContain('config.toml changed: applied');
    expect(logs.some((l) => l.includes('hot folder: watching') && l.includes(path.join(root, 'hot-b')))).toBe(true);
    // The old folder is let go (its watcher closed), so a file dropped there later is never seen.
    await waitUntil(
      'the old folder let go',
      () => logs.some((l) => l.includes('hot folder: stopped watching') && l.includes(path.join(root, 'hot-a'))),
      { timeoutMs: 15_000 },
    );

    // A real file in each folder, at the same moment: only the new folder's is submitted.
    const zip = path.join(root, 'shot.zip');
    await buildFixtureZip(['basic'], zip);
    await copyFile(zip, path.join(root, 'hot-a', 'old.zip'));
    await copyFile(zip, path.join(root, 'hot-b', 'new.zip'));
    const fromHot = await waitUntil(
      "the new folder's file submitted",
      async () => (await submissions()).find((s) => s.path === path.join(root, 'hot-b', 'new.zip')),
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect((await submissions()).map((s) => s.path)).not.toContain(path.join(root, 'hot-a', 'old.zip'));
    const hotJob = await waitUntil(
      'the hot folder job',
      async () => (await submissions()).find((s) => s.id === fromHot.id && s.jobId)?.jobId ?? undefined,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // A job starts with an empty requestedConfig; the render request (status past `validated`) carries the profile's.
    const rendering = await waitUntil(
      'its render request',
      async () => {
        const job = await e2e.client.getJob(hotJob);
        return ['created', 'validating', 'validated'].includes(job.status) ? undefined : job;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(rendering.requestedConfig).toMatchObject({ frameRanges: ['1'], sampleCount: 2, resolution: [64, 48] });

    // The next download goes under the new downloads folder.
    const res = await fetch(`${d.origin}/submissions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ pack: { path: zip } }),
    });
    expect(res.status).toBe(202);
    const id = Submission.parse(await res.json()).id;
    const outDir = await waitUntil(
      "the submission's output folder",
      async () => {
        const s = Submission.parse(await (await fetch(`${d.origin}/submissions/${id}`, { headers })).json());
        if (s.step === 'failed') throw new Error(`submission failed: ${JSON.stringify(s.error)}`);
        return s.outDir ?? undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(outDir.startsWith(path.join(root, 'out-b') + path.sep)).toBe(true);

    // The next trace runs the new Blender: here one that is not there, so the .blend is packed without tracing.
    const pack = await fetch(`${d.origin}/pack`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ path: await buildFixture('basic') }),
    });
    expect(pack.status).toBe(200);
    expect(PackResult.parse(await pack.json()).warnings.map((w) => w.code)).toContain('BLENDER_NOT_FOUND');

    // A broken edit keeps the last good config: the hot folder stays the new one.
    const watching = d.hotFolder;
    await writeFile(file, '[profiles.default]\nhotFolder = 3\n');
    await waitUntil('the warning', () => logs.some((l) => l.includes('config.toml edit not applied')), {
      timeoutMs: 10_000,
    });
    expect(d.hotFolder).toBe(watching);
  }, 300_000);
});
