// `renderbridge jobs priority|pause|resume|approve` and `renderbridge submit`'s scheduling options
// as a script runs them: real processes against the real service. The jobs commands run without a
// worker (the test moves jobs as the API tests do); the submit runs with one and real Blender.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import type { Job } from '../../shared/api/job.js';
import { RenderJobClient } from '../../shared/client/client.js';
import { runCli } from '../helpers/cli-run.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  svc = await startTestService({ workers: 1, worker: { runtime: { heartbeatMs: 200, pollMs: 100 } } });
  home = await mkdtemp(path.join(tmpdir(), 'rb-cli-scheduling-'));
}, 60_000);
afterAll(() => svc.close());

const cli = (args: string[]) =>
  runCli(args, {
    HOME: home,
    XDG_STATE_HOME: path.join(home, 'state'),
    RENDERBRIDGE_DOWNLOADS: path.join(home, 'outputs'),
    RENDERBRIDGE_SERVICE_URL: svc.baseUrl,
    RENDERBRIDGE_API_KEY: svc.apiKey,
    // No session bus: the OS keychain is unreachable, so the key comes from the environment.
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  });

describe('renderbridge jobs priority|pause|resume|approve', () => {
  it('changes an unfinished job, answers --json, and refuses a finished one or a bad priority', async () => {
    const call = api(svc.baseUrl, svc.apiKey);
    // A job the worker will not pick up: created, never validated.
    const job = await createJob(call);
    const prio = await cli(['jobs', 'priority', job.id, '80', '--json']);
    expect(prio.code, prio.stderr).toBe(EXIT.OK);
    expect((JSON.parse(prio.stdout) as { job: Job }).job.scheduling?.priority).toBe(80);
    const paused = await cli(['jobs', 'pause', job.id]);
    expect(paused.code, paused.stderr).toBe(EXIT.OK);
    expect(paused.stdout).toContain(`Paused job ${job.id}`);
    expect(paused.stdout).toContain('scheduling: priority 80, paused');
    const shown = await cli(['jobs', 'show', job.id]);
    expect(shown.stdout).toContain('scheduling: priority 80, paused');
    expect((await cli(['jobs', 'resume', job.id])).stdout).toContain(`Resumed job ${job.id}`);
    const noGate = await cli(['jobs', 'approve', job.id, '--json']);
    expect(noGate.code).not.toBe(EXIT.OK);
    expect(JSON.parse(noGate.stdout)).toMatchObject({ ok: false, error: { name: 'PREVIEW_APPROVAL_NOT_PENDING' } });
    const bad = await cli(['jobs', 'priority', job.id, '101']);
    expect(bad.code).toBe(EXIT.USAGE);
    expect((await call('POST', `/jobs/${job.id}/cancel`)).status).toBe(200);
    const finished = await cli(['jobs', 'pause', job.id]);
    expect(finished.code).not.toBe(EXIT.OK);
    expect(finished.stderr).toContain('JOB_ALREADY_FINISHED');
  }, 60_000);
});

describe('renderbridge submit with scheduling options', () => {
  it('sends priority, the approval gate and --after; approve lets the rest render', async () => {
    const blend = await buildFixture('basic');
    const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const first = await cli(['submit', blend, '--frames', '1', '--no-download', '--json']);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const firstId = (JSON.parse(first.stdout) as { submission: { jobId: string } }).submission.jobId;
    const second = await cli([
      'submit',
      blend,
      '--frames',
      '1-4',
      '--priority',
      '70',
      '--approve-previews',
      '--after',
      firstId,
      '--no-wait',
      '--json',
    ]);
    expect(second.code, second.stderr).toBe(EXIT.OK);
    const id = (JSON.parse(second.stdout) as { submission: { jobId: string } }).submission.jobId;
    const gated = await waitUntil(
      'the previews waiting for approval',
      async () => {
        const j = await client.getJob(id);
        const p = await client.getJobProgress(id);
        return j.scheduling?.previews?.gate === 'waiting' && p.framesDone === 3 && j;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(gated.scheduling).toMatchObject({ priority: 70, dependsOn: [firstId], waitingFor: [] });
    const approved = await cli(['jobs', 'approve', id]);
    expect(approved.code, approved.stderr).toBe(EXIT.OK);
    const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 120_000 });
    expect(done.status).toBe('completed');
  }, 300_000);

  it('sends --require-tag; the job says no live worker has the tags, and a bad tag is a usage error', async () => {
    const blend = await buildFixture('basic');
    const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const bad = await cli(['submit', blend, '--require-tag', 'gpu a4000', '--no-wait']);
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('"gpu a4000" is not a worker tag');
    const r = await cli([
      ...['submit', blend, '--frames', '1', '--require-tag', 'site:nowhere,gpu:none'],
      ...['--require-tag', 'site:nowhere', '--no-wait', '--json'],
    ]);
    expect(r.code, r.stderr).toBe(EXIT.OK);
    const id = (JSON.parse(r.stdout) as { submission: { jobId: string } }).submission.jobId;
    // The test's worker has no tags: it leaves the frame and says why on the job.
    const waiting = await waitUntil(
      'the placement notice',
      async () => {
        const j = await client.getJob(id);
        return j.placement?.reason ? j : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(waiting.scheduling?.requiredTags).toEqual(['site:nowhere', 'gpu:none']);
    expect(waiting.placement?.reason).toBe('no live worker has tag site:nowhere, gpu:none');
    const shown = await cli(['jobs', 'show', id]);
    expect(shown.stdout).toContain('requires tags site:nowhere, gpu:none');
    expect(shown.stdout).toContain('placement: no live worker has tag site:nowhere, gpu:none');
    await client.cancelJob(id);
  }, 180_000);
});
