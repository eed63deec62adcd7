// Settings a person sees only on a finished job, from a config file of the real `renderbridge
// service` with its in-process worker and real Blender: the signed download URLs expire after
// downloadUrlTtlSeconds, and the outputs are scheduled for deletion outputRetentionDays after completion.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { runCli } from '../helpers/cli-run.js';
import { startCliService, type CliService } from '../helpers/cli-service.js';
import { submit, tinyRender } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';

let dir: string;
let svc: CliService;
let client: RenderJobClient;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-config-render-'));
  const file = path.join(dir, 'service.json');
  await writeFile(
    file,
    JSON.stringify({ dataDir: './data', workers: 1, downloadUrlTtlSeconds: '2m', outputRetentionDays: 2 }),
  );
  const created = await runCli(
    [
      'admin',
      'create-key',
      '--init',
      '--data-dir',
      path.join(dir, 'data'),
      '--workspace',
      'studio',
      '--label',
      'render',
    ],
    { HOME: dir },
  );
  expect(created.code, created.stderr).toBe(0);
  svc = startCliService(['--port', '0', '--config', file], { HOME: dir });
  client = new RenderJobClient({ baseUrl: await svc.ready, apiKey: created.stdout.trim().split('\n').at(-1)! });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('settings from the config file on a rendered job', () => {
  it(
    'download URLs live downloadUrlTtlSeconds; outputs are kept outputRetentionDays',
    { timeout: 240_000 },
    async () => {
      const jobId = await submit(client, await buildFixture('basic'));
      await client.waitForStatus(jobId, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
      await client.renderJob(jobId, tinyRender('1'));
      const done = await client.waitForStatus(jobId, ['completed'], { intervalMs: 250, timeoutMs: 120_000 });
      const completedAt = Date.now();
      const deletion = Date.parse(done.output!.scheduledForDeletionAt!);
      // Two days, not the default thirty (the job completed a moment before it was read).
      expect(Math.abs(deletion - (completedAt + 2 * 86_400_000))).toBeLessThan(10 * 60_000);
      const before = Date.now();
      const downloads = await client.getDownloads(jobId);
      expect(downloads.frames).toHaveLength(1);
      const exp = Number(new URL(downloads.frames[0]!).searchParams.get('exp')) * 1000;
      // Two minutes, not the default hour.
      expect(exp - before).toBeGreaterThan(100_000);
      expect(exp - before).toBeLessThan(140_000);
      const frame = await fetch(downloads.frames[0]!);
      expect(frame.status).toBe(200);
    },
  );
});
