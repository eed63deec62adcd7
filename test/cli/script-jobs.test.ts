// `renderbridge jobs` as a script drives it: `jobs wait` exit codes for each way a job ends, one JSON
// document per run under --json (errors included), --fields, --quiet, and `jobs logs` of a real
// render. A real service with one worker and real Blender; every wait is on a condition (the CLI's
// own `jobs wait`), never a fixed sleep. What needs no service is in script-cli.test.ts.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { buildFixture } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/e2e.js';
import { doc, ScriptCli, type Doc } from './script-cli-harness.js';

const h = new ScriptCli({ service: true });

describe('renderbridge jobs wait / show / logs, as a script runs them', () => {
  let doneId = '';

  it('waits for a real render: exit 0, one JSON document with the exit code inside, --fields and --quiet', async () => {
    const s = await h.submitNoWait([await buildFixture('basic'), '--frames', '1']);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    doneId = s.jobId;
    const w = await h.cli(['jobs', 'wait', doneId, '--interval', '0.5', '--json']);
    expect(w.code, w.stderr).toBe(EXIT.OK);
    expect(doc(w.stdout)).toMatchObject({
      ok: true,
      exitCode: 0,
      outcome: 'completed',
      job: { id: doneId, status: 'completed' },
    });

    const human = await h.cli(['jobs', 'wait', doneId]);
    expect(human.code).toBe(EXIT.OK);
    expect(human.stdout).toMatch(/completed/);

    const fields = await h.cli([
      'jobs',
      'show',
      doneId,
      '--json',
      '--fields',
      'job.status,progress.framesDone,exitCode',
    ]);
    expect(fields.code).toBe(0);
    expect(JSON.parse(fields.stdout)).toEqual({
      exitCode: 0,
      job: { status: 'completed' },
      progress: { framesDone: 1 },
    });

    const list = await h.cli(['jobs', 'list', '--json', '--fields', 'jobs.id']);
    expect((JSON.parse(list.stdout) as { jobs: Record<string, unknown>[] }).jobs).toContainEqual({ id: doneId });

    const quiet = await h.cli(['jobs', 'show', doneId, '--quiet']);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe('');
  }, 300_000);

  it('turns every failure into the one JSON document too (service error, usage error)', async () => {
    const missing = await h.cli(['jobs', 'show', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(missing.code).toBe(EXIT.FAILURE);
    expect(doc(missing.stdout)).toMatchObject({ ok: false, exitCode: EXIT.FAILURE, error: { name: 'JOB_NOT_FOUND' } });

    const usage = await h.cli(['jobs', 'list', '--page', 'x', '--json']);
    expect(usage.code).toBe(EXIT.USAGE);
    expect(doc(usage.stdout)).toMatchObject({ ok: false, exitCode: EXIT.USAGE, error: { name: 'USAGE' } });

    const noKey = await h.cli(['jobs', 'list', '--json'], { RENDERBRIDGE_API_KEY: undefined });
    expect(noKey.code).toBe(EXIT.AUTH);
    expect(doc(noKey.stdout)).toMatchObject({ ok: false, exitCode: EXIT.AUTH, error: { name: 'NO_API_KEY' } });
  }, 60_000);

  it('accepts a bare origin for --service and adds the API prefix', async () => {
    const r = await h.cli(['jobs', 'list', '--service', h.svc.origin, '--json'], {
      RENDERBRIDGE_SERVICE_URL: undefined,
    });
    expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(doc(r.stdout).ok).toBe(true);
  }, 30_000);

  it(
    'prints the task logs of a real render: every task, one attempt, the index as JSON, and a follow that ends ' +
      'with the job',
    async () => {
      const all = await h.cli(['jobs', 'logs', doneId]);
      expect(all.code, all.stderr).toBe(EXIT.OK);
      expect(all.stdout).toMatch(
        new RegExp(`^==> task validate:${doneId} \\(validate\\), attempt 1, worker \\S+: done <==$`, 'm'),
      );
      expect(all.stdout).toMatch(/^==> task chunk:\S+ \(render-chunk, frames 1\), attempt 1, worker \S+: done <==$/m);
      expect(all.stdout).toMatch(/Z Fra:1 /);
      const chunk = `chunk:${doneId}:0`;
      const one = await h.cli(['jobs', 'logs', doneId, '--task', chunk, '--attempt', '1']);
      expect(one.code, one.stderr).toBe(EXIT.OK);
      expect(one.stdout.split('\n').filter((l) => l.startsWith('==> '))).toHaveLength(1);
      expect(one.stdout).toContain('attempt ended: done');
      const j = await h.cli(['jobs', 'logs', doneId, '--json']);
      const index = doc(j.stdout) as Doc & { tasks: { id: string; attempts: { state: string }[] }[] };
      expect(index).toMatchObject({ ok: true, exitCode: 0, jobId: doneId });
      expect(index.tasks.map((t) => t.id)).toContain(chunk);
      expect(index.tasks.every((t) => t.attempts.every((a) => a.state === 'done'))).toBe(true);
      // Following a job that has ended prints what there is and ends at once.
      const ended = await h.cli(['jobs', 'logs', doneId, '--follow']);
      expect(ended.code).toBe(EXIT.OK);
      expect(ended.stdout).toMatch(/job completed: end of the log\n$/);
      const missing = await h.cli(['jobs', 'logs', doneId, '--task', `chunk:${doneId}:999`]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/TASK_LOG_NOT_FOUND|no log for that task/);
    },
    60_000,
  );

  it("follows a running job's logs until the job completes, then exits 0", async () => {
    const s = await h.submitNoWait([await buildFixture('basic'), '--frames', '1-2']);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    const f = await h.cli(['jobs', 'logs', s.jobId, '--follow']);
    expect(f.code, f.stderr).toBe(EXIT.OK);
    expect(f.stdout).toMatch(/Z Fra:2 /);
    expect(f.stdout).toMatch(/job completed: end of the log\n$/);
    expect((await h.cli(['jobs', 'show', s.jobId, '--json', '--fields', 'job.status'])).stdout).toContain('completed');
  }, 300_000);

  it('stops following on Ctrl-C cleanly: exit 0, what arrived printed, nothing on stderr', async () => {
    const s = await h.submitNoWait([
      await buildFixture('basic'),
      '--frames',
      '1-40',
      '--samples',
      '3000',
      '--resolution',
      '320x240',
    ]);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'jobs', 'logs', s.jobId, '--follow'], {
      env: { PATH: process.env.PATH, ...h.cliEnv() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Blender's lines arriving through the follow: the job renders and the stream is live.
    await waitUntil('rendered lines to arrive through the follow', () => /Z Fra:1 /.test(stdout), {
      timeoutMs: 180_000,
      intervalMs: 100,
    });
    child.kill('SIGINT');
    expect(await exited).toBe(EXIT.OK);
    expect(stderr).toBe('');
    expect(stdout).not.toMatch(/end of the log/);
    expect((await h.cli(['jobs', 'cancel', s.jobId])).code).toBe(EXIT.OK);
  }, 300_000);

  it('says a service without the task-logs extension does not offer them, with its own exit code', async () => {
    // The same service behind a proxy that answers GET /extensions as a spec-only service does.
    const proxy = http.createServer((req, res) => {
      if (req.url?.endsWith('/extensions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            message: 'No such endpoint',
            name: 'ROUTE_NOT_FOUND',
            details: [],
            type: 'api',
            metadata: {},
          }),
        );
        return;
      }
      const up = http.request(`${h.svc.origin}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/external/v1`;
      const r = await h.cli(['jobs', 'logs', doneId], { RENDERBRIDGE_SERVICE_URL: url });
      expect(r.code).toBe(EXIT.NOT_OFFERED);
      expect(r.stderr).toMatch(/does not offer task logs/);
      const j = await h.cli(['jobs', 'logs', doneId, '--json'], { RENDERBRIDGE_SERVICE_URL: url });
      expect(doc(j.stdout)).toMatchObject({
        ok: false,
        exitCode: EXIT.NOT_OFFERED,
        error: { name: 'TASK_LOGS_NOT_OFFERED' },
      });
    } finally {
      proxy.close();
    }
  }, 30_000);

  it('exits 3 waiting on a job that failed validation', async () => {
    const s = await h.cli(['submit', await buildFixture('odd'), '--no-wait', '--no-download', '--json']);
    expect(s.code).toBe(EXIT.VALIDATION_FAILED);
    const jobId = (doc(s.stdout) as Doc & { submission: { jobId: string } }).submission.jobId;
    const w = await h.cli(['jobs', 'wait', jobId, '--json']);
    expect(w.code).toBe(EXIT.VALIDATION_FAILED);
    expect(doc(w.stdout)).toMatchObject({
      ok: false,
      exitCode: EXIT.VALIDATION_FAILED,
      outcome: 'failed',
      job: { status: 'failed' },
    });
    const human = await h.cli(['jobs', 'wait', jobId, '--quiet']);
    expect(human.code).toBe(EXIT.VALIDATION_FAILED);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/failed/);
  }, 300_000);

  it('sends the overrides as requestedConfig; a long job times out (9), is watched, then canceled (5)', async () => {
    const s = await h.submitNoWait([
      await buildFixture('basic'),
      ...['--frames', '1-24', '--samples', '3000', '--resolution', '640x480', '--resolution-percentage', '50'],
      ...['--device', 'cpu', '--gpus', '0', '--blender-version', '3.4', '--color-management', 'default'],
      ...['--notes', 'from the script test', '--scene', 'Scene', '--no-denoise'],
    ]);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    const show = await h.cli(['jobs', 'show', s.jobId, '--json', '--fields', 'job.requestedConfig']);
    expect((doc(show.stdout) as Doc & { job: { requestedConfig: unknown } }).job.requestedConfig).toMatchObject({
      sampleCount: 3000,
      resolution: [640, 480],
      resolutionPercentage: 50,
      computeDeviceType: 'CPU',
      gpuCount: 0,
      hostVersionForRender: '3.4',
      colorManagementPreset: 'default',
      notes: 'from the script test',
      denoisingEnabled: false,
      frameRanges: ['1-24'],
    });

    const timeout = await h.cli(['jobs', 'wait', s.jobId, '--timeout', '1', '--json']);
    expect(timeout.code).toBe(EXIT.TIMEOUT);
    expect(doc(timeout.stdout)).toMatchObject({ ok: false, exitCode: EXIT.TIMEOUT, outcome: 'timeout' });

    // Not a terminal: plain lines with the rate and ETA fields, no redraws.
    const watch = await h.cli(['jobs', 'watch', s.jobId, '--timeout', '2', '--interval', '0.5']);
    expect(watch.code).toBe(EXIT.TIMEOUT);
    expect(watch.stdout).toMatch(/frames\/min|rate: -/);
    expect(watch.stdout).toMatch(/ETA/);
    expect(watch.stdout).not.toContain('\r');

    const cancel = await h.cli(['jobs', 'cancel', s.jobId, '--json', '--fields', 'id']);
    expect(cancel.code, cancel.stderr).toBe(EXIT.OK);
    expect(JSON.parse(cancel.stdout)).toEqual({ id: s.jobId });
    const canceled = await h.cli(['jobs', 'wait', s.jobId, '--interval', '0.5']);
    expect(canceled.code).toBe(EXIT.CANCELED);
    expect(canceled.stderr).toMatch(/canceled/);
  }, 300_000);
});
