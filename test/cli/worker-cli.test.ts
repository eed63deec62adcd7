// `renderbridge worker` in its own process beside a service that runs no worker: it takes the
// service's tasks through the shared data folder.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ workers: 0 });
});
afterAll(() => svc.close());

describe('renderbridge worker', () => {
  it('validates a job queued by a service without a worker, and stops cleanly on SIGTERM', async () => {
    const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const target = await client.uploadProject(await buildFixture('basic'));
    const job = await client.createJob({ slug: target.slug });
    await client.validateJob(job.id);
    expect((await client.getJob(job.id)).status).toBe('validating');

    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'cli/index.ts', 'worker', '--data-dir', svc.dataDir, '--log-level', 'warn'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const validated = await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 60_000 });
      expect(validated.analysis?.output?.sceneCameras?.length).toBe(2);
      expect(stderr).toMatch(/renderbridge worker \S+: cpu-0 with Blender/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 90_000);
});
