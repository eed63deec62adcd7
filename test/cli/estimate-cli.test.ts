// `renderbridge estimate` as a script runs it: a real process against the real service. The
// service has no worker here: the test plays it (the job moved to `validated`, the estimate's
// frames written through the ports, as a worker beside the service writes them), so what is
// checked is the command's output, exit codes and the request it sends.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import type { Estimate } from '../../shared/api/estimate.js';
import { runCli } from '../helpers/cli-run.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  svc = await startTestService({ workers: 0, estimateRates: 'CPU=3.6' });
  home = await mkdtemp(path.join(tmpdir(), 'rb-cli-estimate-'));
}, 60_000);
afterAll(() => svc.close());

const cli = (args: string[]) =>
  runCli(['estimate', ...args], {
    HOME: home,
    XDG_STATE_HOME: path.join(home, 'state'),
    RENDERBRIDGE_SERVICE_URL: svc.baseUrl,
    RENDERBRIDGE_API_KEY: svc.apiKey,
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  });

async function validatedJob(): Promise<string> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  for (const [from, to] of [
    ['created', 'validating'],
    ['validating', 'validated'],
  ] as const) {
    expect(await svc.service.ports.jobs.transition(job.id, [from], to)).toBeDefined();
  }
  return job.id;
}

/** Plays the worker: frames 1, 50 and 100 of 1-100 measured (2 s, 2 s, 10 s on the CPU), the estimate ready. */
async function finishSampling(id: string): Promise<void> {
  const rec = (await svc.service.ports.jobs.getById(id))!;
  const at = new Date().toISOString();
  const samples = [
    [1, 2],
    [50, 2],
    [100, 10],
  ].map(([frame, seconds]) => ({ frame: frame!, seconds: seconds!, peakMemoryBytes: 2 ** 30, device: 'CPU' }));
  await svc.service.ports.jobs.update(
    id,
    {},
    {
      estimate: {
        ...rec.internal.estimate!,
        state: 'ready',
        frames: [1, 50, 100],
        samples,
        frameRanges: ['1-100'],
        loadSeconds: [1, 1, 1],
        outputBytes: [1000, 1000, 1000],
        ownSeconds: 17,
        ownNormalizedSeconds: 17,
        finishedAt: at,
      },
    },
  );
}

describe('renderbridge estimate', () => {
  it('starts an estimate with the flags as the request, waits for it and prints its figures and warnings', async () => {
    const id = await validatedJob();
    const started = await cli([id, '--frames', '1-100', '--samples', '16', '--no-wait', '--json']);
    expect(started.code, started.stderr).toBe(EXIT.OK);
    const doc = JSON.parse(started.stdout) as { estimate: Estimate; replay: boolean };
    expect(doc).toMatchObject({
      ok: true,
      replay: false,
      estimate: {
        state: 'sampling',
        requestedRenderConfig: { colorManagementPreset: 'default', frameRanges: ['1-100'], sampleCount: 16 },
      },
    });
    // The job stays validated for a spec client.
    expect((await svc.service.ports.jobs.getById(id))!.job.status).toBe('validated');

    await finishSampling(id);
    const shown = await cli([id, '--frames', '1-100', '--samples', '16']);
    expect(shown.code, shown.stderr).toBe(EXIT.OK);
    expect(shown.stdout).toContain(`Estimate of job ${id}: ready, from frames 1, 50, 100.`);
    expect(shown.stdout).toMatch(/Wall time on this farm now: .+ for 97 frames left \(rests on 3 frames\)/);
    expect(shown.stdout).toContain('Warning: Frame times vary 5x along the timeline: the band is wide.');
    expect(shown.stdout).toContain('The estimate itself: 17.0s of rendering, cost 0.02');

    const json = JSON.parse((await cli([id, '--frames', '1-100', '--samples', '16', '--json'])).stdout) as {
      estimate: Estimate;
      replay: boolean;
    };
    expect(json.replay).toBe(true);
    expect(json.estimate.figures).toMatchObject({ device: 'CPU', framesToRender: 97, renderSeconds: { frames: 3 } });
  }, 60_000);

  it("cancels an estimate that samples; a job not validated is refused with the service's error", async () => {
    const id = await validatedJob();
    expect((await cli([id, '--no-wait'])).code).toBe(EXIT.OK);
    const canceled = JSON.parse((await cli([id, '--cancel', '--json'])).stdout) as { estimate: Estimate };
    expect(canceled.estimate.state).toBe('canceled');

    const created = await createJob(api(svc.baseUrl, svc.apiKey));
    const refused = await cli([created.id, '--json']);
    expect(refused.code).not.toBe(EXIT.OK);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { name: 'ESTIMATE_NOT_ALLOWED' } });
  }, 60_000);
});
