// `renderbridge jobs requeue` as a script runs it: a real process against the real service.
// The service has no worker here: the test moves jobs through the state machine itself (as the
// API tests do), so what is checked is the command's output, exit codes and the job it made.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { moveJob } from '../../service/domain/job-lifecycle.js';
import { runCli } from '../helpers/cli-run.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  svc = await startTestService();
  home = await mkdtemp(path.join(tmpdir(), 'rb-cli-requeue-'));
}, 60_000);
afterAll(() => svc.close());

const cli = (args: string[]) =>
  runCli(['jobs', 'requeue', ...args], {
    HOME: home,
    XDG_STATE_HOME: path.join(home, 'state'),
    RENDERBRIDGE_SERVICE_URL: svc.baseUrl,
    RENDERBRIDGE_API_KEY: svc.apiKey,
    // No session bus: the OS keychain is unreachable, so the key comes from the environment.
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  });

describe('renderbridge jobs requeue', () => {
  it('requeues a failed job once (--json), says so on a repeat, and refuses a job still running', async () => {
    const call = api(svc.baseUrl, svc.apiKey);
    const failed = await createJob(call);
    expect(
      await moveJob(svc.service.ports.jobs, failed.id, 'fail', {
        failedReason: { name: 'RETRIES_EXHAUSTED', type: 'RENDER_FAILED', errorDetails: { message: 'test' } },
      }),
    ).toBeDefined();

    const first = await cli([failed.id, '--json']);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const doc = JSON.parse(first.stdout) as {
      ok: boolean;
      job: { id: string; status: string };
      replay: boolean;
      requeuedFrom: string;
    };
    expect(doc).toMatchObject({ ok: true, replay: false, requeuedFrom: failed.id, job: { status: 'validating' } });
    expect(doc.job.id).not.toBe(failed.id);
    // The new job is in the workspace, waiting for a worker to validate it.
    expect((await call('GET', `/jobs/${doc.job.id}`)).status).toBe(200);

    const again = await cli([failed.id]);
    expect(again.code, again.stderr).toBe(EXIT.OK);
    expect(again.stdout).toContain(`Already requeued ${failed.id} as job ${doc.job.id}`);

    // A job that never asked for a render has no frames to choose from.
    const frames = await cli([failed.id, '--frames', '1-3', '--json']);
    expect(frames.code).not.toBe(EXIT.OK);
    expect(JSON.parse(frames.stdout)).toMatchObject({ ok: false, error: { name: 'VALIDATION_ERROR' } });

    const running = await createJob(call);
    const refused = await cli([running.id]);
    expect(refused.code).not.toBe(EXIT.OK);
    expect(refused.stderr).toContain('JOB_NOT_REQUEUEABLE');
  }, 60_000);
});
