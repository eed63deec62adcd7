// `renderbridge workers` against a real service with its in-process worker (real Blender): the
// worker, its slots and Blender build for people, the same as one JSON document with --json
// (--fields narrows it), and a service that has no worker says how to get one.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerList } from '../../shared/api/workers.js';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { waitUntil } from '../helpers/e2e.js';
import { startTestService, type TestService } from '../helpers/service.js';

const hasBlender = spawnSync('sh', ['-c', 'command -v blender']).status === 0;
if (!hasBlender) {
  if (process.env.CI === 'true')
    throw new Error('the workers CLI test needs blender (Debian: apt-get install blender)');
  console.warn('skipping the workers CLI test: blender missing (Debian: apt-get install blender)');
}

let svc: TestService;
let bare: TestService;
let home: string;

beforeAll(async () => {
  if (!hasBlender) return;
  [svc, bare] = await Promise.all([
    startTestService({ workers: 1, workerTags: ['site:paris', 'gpu:none'], slotMemoryBytes: 2 ** 32 }),
    startTestService({ workers: 0 }),
  ]);
  home = await mkdtemp(path.join(tmpdir(), 'rb-workers-home-'));
}, 120_000);
afterAll(async () => {
  await svc?.close();
  await bare?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

function cli(args: string[], on: TestService): Promise<CliRun> {
  return runCli(args, {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_STATE_HOME: path.join(home, 'state'),
    RENDERBRIDGE_SERVICE_URL: on.baseUrl,
    RENDERBRIDGE_API_KEY: on.apiKey,
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  });
}

describe.skipIf(!hasBlender)('renderbridge workers', () => {
  it('lists the worker with its slots and Blender, as lines and as JSON', async () => {
    const doc = await waitUntil(
      'the in-process worker to report',
      async () => {
        const r = await cli(['workers', '--json'], svc);
        expect(r.code, r.stderr).toBe(0);
        const d = JSON.parse(r.stdout) as { ok: boolean; exitCode: number } & WorkerList['data'];
        return d.workers.length > 0 ? d : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(doc).toMatchObject({ ok: true, exitCode: 0 });
    expect(doc.workers[0]).toMatchObject({
      state: 'running',
      slots: [{ id: 'control' }, { id: 'cpu-0', state: 'idle', memoryBytes: 2 ** 32 }],
      tags: ['site:paris', 'gpu:none'],
    });
    expect(doc.workers[0]!.memoryBytes).toBeGreaterThan(0);
    expect(doc.queue.map((q) => q.kind)).toEqual(['validate', 'render', 'render-chunk', 'finalize']);

    const human = await cli(['workers'], svc);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^${doc.workers[0]!.name}  running  \\(`, 'm'));
    expect(human.stdout).toMatch(/^ {2}cpu-0 +CPU 4\.0 GiB +idle/m);
    expect(human.stdout).toMatch(/^ {2}Tags: site:paris, gpu:none$/m);
    expect(human.stdout).toMatch(/^ {2}Memory: \d+\.\d GiB$/m);
    expect(human.stdout).toMatch(/^ {2}Blender: \d+\.\d+/m);
    expect(human.stdout).toMatch(/^queue: validation 0 queued, 0 running; render planning 0 queued/m);

    const narrowed = await cli(['workers', '--json', '--fields', 'workers.name,workers.state'], svc);
    expect(JSON.parse(narrowed.stdout)).toEqual({ workers: [{ name: doc.workers[0]!.name, state: 'running' }] });
  });

  it('says how to get a worker when none has reported', async () => {
    const r = await cli(['workers'], bare);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /No worker has reported: start one with `renderbridge worker`, or run the service with --workers 1 or more\./,
    );
  });
});
