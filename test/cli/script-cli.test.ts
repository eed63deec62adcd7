// `renderbridge` as a script drives it: `jobs wait` exit codes for each way a job ends, one JSON
// document per run under --json (errors included), --fields, --quiet, submit's render overrides
// reaching the job, and the completion script in a real bash. A real service with one worker and
// real Blender; every wait is on a condition (the CLI's own `jobs wait`), never a fixed sleep.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { buildFixture } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/e2e.js';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  svc = await startTestService({ workers: 1 });
  home = await mkdtemp(path.join(tmpdir(), 'rb-script-home-'));
}, 120_000);
afterAll(() => svc.close());

/** A fresh HOME and XDG folders, the test service and its key; `env` adds to or removes from that. */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return runCli(args, cliEnv(env));
}

function cliEnv(env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_DATA_HOME: path.join(home, 'data'),
    RENDERBRIDGE_DOWNLOADS: path.join(home, 'outputs'),
    RENDERBRIDGE_SERVICE_URL: svc.baseUrl,
    RENDERBRIDGE_API_KEY: svc.apiKey,
    // No session bus: the OS keychain is unreachable, so the key comes from the environment.
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
    ...env,
  };
}

interface Doc {
  ok: boolean;
  exitCode: number;
  error?: { name: string; message: string };
  [key: string]: unknown;
}

function doc(stdout: string): Doc {
  return JSON.parse(stdout) as Doc;
}

async function submitNoWait(args: string[]): Promise<{ code: number | null; jobId: string; stderr: string }> {
  const r = await cli(['submit', ...args, '--no-wait', '--no-download', '--json']);
  const d = doc(r.stdout) as Doc & { submission: { jobId: string } };
  return { code: r.code, jobId: d.submission.jobId, stderr: r.stderr };
}

describe('renderbridge jobs wait / show / logs, as a script runs them', () => {
  let doneId = '';

  it('waits for a real render: exit 0, one JSON document with the exit code inside, --fields and --quiet', async () => {
    const s = await submitNoWait([await buildFixture('basic'), '--frames', '1']);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    doneId = s.jobId;
    const w = await cli(['jobs', 'wait', doneId, '--interval', '0.5', '--json']);
    expect(w.code, w.stderr).toBe(EXIT.OK);
    expect(doc(w.stdout)).toMatchObject({
      ok: true,
      exitCode: 0,
      outcome: 'completed',
      job: { id: doneId, status: 'completed' },
    });

    const human = await cli(['jobs', 'wait', doneId]);
    expect(human.code).toBe(EXIT.OK);
    expect(human.stdout).toMatch(/completed/);

    const fields = await cli(['jobs', 'show', doneId, '--json', '--fields', 'job.status,progress.framesDone,exitCode']);
    expect(fields.code).toBe(0);
    expect(JSON.parse(fields.stdout)).toEqual({
      exitCode: 0,
      job: { status: 'completed' },
      progress: { framesDone: 1 },
    });

    const list = await cli(['jobs', 'list', '--json', '--fields', 'jobs.id']);
    expect((JSON.parse(list.stdout) as { jobs: Record<string, unknown>[] }).jobs).toContainEqual({ id: doneId });

    const quiet = await cli(['jobs', 'show', doneId, '--quiet']);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe('');
  }, 300_000);

  it('turns every failure into the one JSON document too (service error, usage error)', async () => {
    const missing = await cli(['jobs', 'show', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(missing.code).toBe(EXIT.FAILURE);
    expect(doc(missing.stdout)).toMatchObject({ ok: false, exitCode: EXIT.FAILURE, error: { name: 'JOB_NOT_FOUND' } });

    const usage = await cli(['jobs', 'list', '--page', 'x', '--json']);
    expect(usage.code).toBe(EXIT.USAGE);
    expect(doc(usage.stdout)).toMatchObject({ ok: false, exitCode: EXIT.USAGE, error: { name: 'USAGE' } });

    const noKey = await cli(['jobs', 'list', '--json'], { RENDERBRIDGE_API_KEY: undefined });
    expect(noKey.code).toBe(EXIT.AUTH);
    expect(doc(noKey.stdout)).toMatchObject({ ok: false, exitCode: EXIT.AUTH, error: { name: 'NO_API_KEY' } });
  }, 60_000);

  it('accepts a bare origin for --service and adds the API prefix', async () => {
    const r = await cli(['jobs', 'list', '--service', svc.origin, '--json'], { RENDERBRIDGE_SERVICE_URL: undefined });
    expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(doc(r.stdout).ok).toBe(true);
  }, 30_000);

  it(
    'prints the task logs of a real render: every task, one attempt, the index as JSON, and a follow that ends ' +
      'with the job',
    async () => {
      const all = await cli(['jobs', 'logs', doneId]);
      expect(all.code, all.stderr).toBe(EXIT.OK);
      expect(all.stdout).toMatch(
        new RegExp(`^==> task validate:${doneId} \\(validate\\), attempt 1, worker \\S+: done <==$`, 'm'),
      );
      expect(all.stdout).toMatch(/^==> task chunk:\S+ \(render-chunk, frames 1\), attempt 1, worker \S+: done <==$/m);
      expect(all.stdout).toMatch(/Z Fra:1 /);
      const chunk = `chunk:${doneId}:0`;
      const one = await cli(['jobs', 'logs', doneId, '--task', chunk, '--attempt', '1']);
      expect(one.code, one.stderr).toBe(EXIT.OK);
      expect(one.stdout.split('\n').filter((l) => l.startsWith('==> '))).toHaveLength(1);
      expect(one.stdout).toContain('attempt ended: done');
      const j = await cli(['jobs', 'logs', doneId, '--json']);
      const index = doc(j.stdout) as Doc & { tasks: { id: string; attempts: { state: string }[] }[] };
      expect(index).toMatchObject({ ok: true, exitCode: 0, jobId: doneId });
      expect(index.tasks.map((t) => t.id)).toContain(chunk);
      expect(index.tasks.every((t) => t.attempts.every((a) => a.state === 'done'))).toBe(true);
      // Following a job that has ended prints what there is and ends at once.
      const ended = await cli(['jobs', 'logs', doneId, '--follow']);
      expect(ended.code).toBe(EXIT.OK);
      expect(ended.stdout).toMatch(/job completed: end of the log\n$/);
      const missing = await cli(['jobs', 'logs', doneId, '--task', `chunk:${doneId}:999`]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/TASK_LOG_NOT_FOUND|no log for that task/);
    },
    60_000,
  );

  it("follows a running job's logs until the job completes, then exits 0", async () => {
    const s = await submitNoWait([await buildFixture('basic'), '--frames', '1-2']);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    const f = await cli(['jobs', 'logs', s.jobId, '--follow']);
    expect(f.code, f.stderr).toBe(EXIT.OK);
    expect(f.stdout).toMatch(/Z Fra:2 /);
    expect(f.stdout).toMatch(/job completed: end of the log\n$/);
    expect((await cli(['jobs', 'show', s.jobId, '--json', '--fields', 'job.status'])).stdout).toContain('completed');
  }, 300_000);

  it('stops following on Ctrl-C cleanly: exit 0, what arrived printed, nothing on stderr', async () => {
    const s = await submitNoWait([
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
      env: { PATH: process.env.PATH, ...cliEnv() },
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
    expect((await cli(['jobs', 'cancel', s.jobId])).code).toBe(EXIT.OK);
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
      const up = http.request(`${svc.origin}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/external/v1`;
      const r = await cli(['jobs', 'logs', doneId], { RENDERBRIDGE_SERVICE_URL: url });
      expect(r.code).toBe(EXIT.NOT_OFFERED);
      expect(r.stderr).toMatch(/does not offer task logs/);
      const j = await cli(['jobs', 'logs', doneId, '--json'], { RENDERBRIDGE_SERVICE_URL: url });
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
    const s = await cli(['submit', await buildFixture('odd'), '--no-wait', '--no-download', '--json']);
    expect(s.code).toBe(EXIT.VALIDATION_FAILED);
    const jobId = (doc(s.stdout) as Doc & { submission: { jobId: string } }).submission.jobId;
    const w = await cli(['jobs', 'wait', jobId, '--json']);
    expect(w.code).toBe(EXIT.VALIDATION_FAILED);
    expect(doc(w.stdout)).toMatchObject({
      ok: false,
      exitCode: EXIT.VALIDATION_FAILED,
      outcome: 'failed',
      job: { status: 'failed' },
    });
    const human = await cli(['jobs', 'wait', jobId, '--quiet']);
    expect(human.code).toBe(EXIT.VALIDATION_FAILED);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/failed/);
  }, 300_000);

  it('sends the overrides as requestedConfig; a long job times out (9), is watched, then canceled (5)', async () => {
    const s = await submitNoWait([
      await buildFixture('basic'),
      ...['--frames', '1-24', '--samples', '3000', '--resolution', '640x480', '--resolution-percentage', '50'],
      ...['--device', 'cpu', '--gpus', '0', '--blender-version', '3.4', '--color-management', 'default'],
      ...['--notes', 'from the script test', '--scene', 'Scene', '--no-denoise'],
    ]);
    expect(s.code, s.stderr).toBe(EXIT.OK);
    const show = await cli(['jobs', 'show', s.jobId, '--json', '--fields', 'job.requestedConfig']);
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

    const timeout = await cli(['jobs', 'wait', s.jobId, '--timeout', '1', '--json']);
    expect(timeout.code).toBe(EXIT.TIMEOUT);
    expect(doc(timeout.stdout)).toMatchObject({ ok: false, exitCode: EXIT.TIMEOUT, outcome: 'timeout' });

    // Not a terminal: plain lines with the rate and ETA fields, no redraws.
    const watch = await cli(['jobs', 'watch', s.jobId, '--timeout', '2', '--interval', '0.5']);
    expect(watch.code).toBe(EXIT.TIMEOUT);
    expect(watch.stdout).toMatch(/frames\/min|rate: -/);
    expect(watch.stdout).toMatch(/ETA/);
    expect(watch.stdout).not.toContain('\r');

    const cancel = await cli(['jobs', 'cancel', s.jobId, '--json', '--fields', 'id']);
    expect(cancel.code, cancel.stderr).toBe(EXIT.OK);
    expect(JSON.parse(cancel.stdout)).toEqual({ id: s.jobId });
    const canceled = await cli(['jobs', 'wait', s.jobId, '--interval', '0.5']);
    expect(canceled.code).toBe(EXIT.CANCELED);
    expect(canceled.stderr).toMatch(/canceled/);
  }, 300_000);
});

describe('renderbridge submit overrides, completion and help (no service needed)', () => {
  it('refuses a bad override as a usage error naming the flag', async () => {
    for (const [flag, value] of [
      ['--samples', '0'],
      ['--resolution', '1920by1080'],
      ['--device', 'TPU'],
      ['--color-management', 'filmic'],
      ['--blender-version', 'latest'],
      ['--gpus', '99'],
    ] as const) {
      const r = await cli(['submit', 'nothing.blend', flag, value, '--json']);
      expect(r.code, `${flag} ${value}`).toBe(EXIT.USAGE);
      expect(doc(r.stdout).error?.message).toContain(flag);
    }
  }, 60_000);

  it(
    'prints bash, zsh and fish completion scripts that each shell accepts and that complete "renderbridge jo" ' +
      'to jobs',
    async () => {
      const r = await cli(['completion', 'bash']);
      expect(r.code).toBe(0);
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'rb-compl-')), 'renderbridge.bash');
      await writeFile(file, r.stdout);
      expect(spawnSync('bash', ['-n', file]).status).toBe(0);
      const script =
        `source ${JSON.stringify(file)}; complete -p renderbridge; COMP_WORDS=(renderbridge jo); COMP_CWORD=1; ` +
        `$(complete -p renderbridge | sed -E 's/.*-F ([^ ]+).*/\\1/'); echo "got:\${COMPREPLY[*]}"; ` +
        `COMP_WORDS=(renderbridge jobs wait x --ti); COMP_CWORD=4; _renderbridge_complete; echo ` +
        `"opt:\${COMPREPLY[*]}"`;
      const out = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      expect(out.stdout).toMatch(/complete -F \S+ renderbridge/);
      expect(out.stdout).toContain('got:jobs\n');
      expect(out.stdout).toContain('opt:--timeout\n');
      // zsh runs the same function through bashcompinit; its completion system filters by the
      // typed prefix itself, so the check is that the right list comes back at each position.
      const zsh = await cli(['completion', 'zsh']);
      expect(zsh.code).toBe(0);
      const zshFile = path.join(path.dirname(file), 'renderbridge.zsh');
      await writeFile(zshFile, zsh.stdout);
      expect(spawnSync('zsh', ['-n', zshFile]).status).toBe(0);
      const zshOut = spawnSync(
        'zsh',
        [
          '-fc',
          `autoload -U compinit && compinit -u -D; source ${JSON.stringify(zshFile)}; COMP_WORDS=(renderbridge ` +
            `jo); COMP_CWORD=1; _renderbridge_complete; print -r -- "top:\${COMPREPLY[*]}"; ` +
            `COMP_WORDS=(renderbridge jobs wait x --ti); COMP_CWORD=4; _renderbridge_complete; print -r -- ` +
            `"opt:\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      );
      expect(zshOut.stderr).toBe('');
      expect(zshOut.stdout).toMatch(/^top:.*\bjobs\b/m);
      expect(zshOut.stdout).toMatch(/^opt:.*--timeout/m);
      expect(zshOut.stdout).not.toMatch(/^opt:(.* )?service( |$)/m);
      const fish = await cli(['completion', 'fish']);
      expect(fish.code).toBe(0);
      const fishFile = path.join(path.dirname(file), 'renderbridge.fish');
      await writeFile(fishFile, fish.stdout);
      expect(spawnSync('fish', ['--no-execute', fishFile]).status).toBe(0);
      const fishOut = spawnSync(
        'fish',
        [
          '-c',
          `source ${JSON.stringify(fishFile)}; complete -C "renderbridge jo"; complete -C "renderbridge jobs ` +
            `wait x --ti"`,
        ],
        { encoding: 'utf8' },
      );
      expect(fishOut.stdout.split('\n').map((l) => l.split('\t')[0])).toEqual(
        expect.arrayContaining(['jobs', '--timeout']),
      );
      expect((await cli(['completion', 'tcsh'])).code).toBe(EXIT.USAGE);
    },
    60_000,
  );

  it("ends every command's help with examples", async () => {
    const paths = [
      [],
      ['submit'],
      ['jobs'],
      ['jobs', 'wait'],
      ['jobs', 'watch'],
      ['jobs', 'logs'],
      ['jobs', 'list'],
      ['admin', 'create-key'],
      ['daemon'],
      ['completion'],
    ];
    for (const p of paths) {
      const r = await cli([...p, '--help']);
      expect(r.stdout.trimEnd(), p.join(' ')).toMatch(/Examples:\n(\s+\$ .*renderbridge.*\n?)+$/);
    }
  }, 120_000);
});
