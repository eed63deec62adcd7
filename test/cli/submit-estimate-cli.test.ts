// `renderbridge submit --estimate` as a script runs it: a real process against the real service
// with its worker and real Blender. With --yes it packs, validates, estimates and starts the
// render of the same job, which keeps the sampled frames; without a terminal and without --yes it
// stops at the estimate, the job left validated.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import type { Estimate } from '../../shared/api/estimate.js';
import { FrameStatsPage } from '../../shared/api/frame-stats.js';
import { runCli } from '../helpers/cli-run.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  svc = await startTestService({ workers: 1, worker: { runtime: { heartbeatMs: 200, pollMs: 100 } } });
  home = await mkdtemp(path.join(tmpdir(), 'rb-cli-submit-estimate-'));
}, 120_000);
afterAll(() => svc.close());

const cli = (args: string[]) =>
  runCli(['submit', ...args], {
    HOME: home,
    XDG_STATE_HOME: path.join(home, 'state'),
    RENDERBRIDGE_SERVICE_URL: svc.baseUrl,
    RENDERBRIDGE_API_KEY: svc.apiKey,
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  });

const small = ['--frames', '1-5', '--resolution', '64x48', '--samples', '4'];

describe('renderbridge submit --estimate', () => {
  it('estimates, then with --yes renders the same job without the sampled frames again', async () => {
    const r = await cli([await buildFixture('basic'), ...small, '--estimate', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(EXIT.OK);
    const doc = JSON.parse(r.stdout) as { ok: boolean; jobId: string; rendered: boolean; estimate: Estimate };
    expect(doc).toMatchObject({
      ok: true,
      rendered: true,
      estimate: { state: 'ready', sampleFrames: [1, 3, 5], framesTotal: 5 },
    });
    const call = api(svc.baseUrl, svc.apiKey);
    const sampled = FrameStatsPage.parse((await call('GET', `/jobs/${doc.jobId}/frames`)).body).data.frames.filter(
      (f) => [1, 3, 5].includes(f.frame),
    );
    await waitUntil(
      'the render to complete',
      async () =>
        (await call<{ data: { status: string } }>('GET', `/jobs/${doc.jobId}`)).body.data.status === 'completed',
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    const rows = FrameStatsPage.parse((await call('GET', `/jobs/${doc.jobId}/frames`)).body).data.frames;
    expect(rows.map((f) => f.frame)).toEqual([1, 2, 3, 4, 5]);
    for (const s of sampled) expect(rows.find((f) => f.frame === s.frame)).toEqual(s);
  }, 600_000);

  it('stops at the estimate without a terminal and without --yes: the job stays validated', async () => {
    const r = await cli([await buildFixture('basic'), ...small, '--estimate']);
    expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(r.stdout).toMatch(/Estimate of job \S+: ready, from frames 1, 3, 5\./);
    const id = /Job (\S+) stays validated, not rendered/.exec(r.stdout)?.[1];
    expect(id).toBeDefined();
    expect(
      (await api(svc.baseUrl, svc.apiKey)<{ data: { status: string } }>('GET', `/jobs/${id}`)).body.data.status,
    ).toBe('validated');
  }, 600_000);
});
