// The active profile's submission defaults (outputFormat, video, overrides) reach every
// submission: the real `renderbridge submit` as a subprocess with a fresh HOME and a config.toml,
// and the real `renderbridge daemon` taking POST /submissions as the add-on sends it, against a
// real service with a worker. The job's requestedConfig is what is checked: flag (or the
// add-on's explicit body) > environment > profile > default.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { DaemonState } from '../../shared/daemon/api.js';
import { Submission } from '../../shared/daemon/submission-schemas.js';
import { buildFixture } from '../helpers/fixtures.js';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';

let e2e: E2E;
let home: string;
let daemon: ChildProcess | undefined;

const PROFILE = (origin: string): string => `defaultProfile = "studio"

[profiles.studio]
serviceUrl = "${origin}"
downloadsDir = "~/farm-out"
outputFormat = "JPEG"
video = false

[profiles.studio.overrides]
sampleCount = 2
resolution = [64, 48]
notes = "from the studio profile"
`;

beforeAll(async () => {
  e2e = await startE2E();
  home = await mkdtemp(path.join(tmpdir(), 'rb-profile-home-'));
  const file = path.join(home, 'config', 'renderbridge', 'config.toml');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, PROFILE(e2e.svc.origin));
}, 120_000);
afterAll(async () => {
  daemon?.kill('SIGTERM');
  await e2e?.svc.close();
  await rm(home, { recursive: true, force: true });
});

/** A fresh HOME with only config.toml: the service URL comes from the profile, the key from the environment. */
function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_DATA_HOME: path.join(home, 'data'),
    RENDERBRIDGE_API_KEY: e2e.svc.apiKey,
    // No session bus: the OS keychain is unreachable, so the key comes from the environment.
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
    ...extra,
  };
}

async function submitted(
  args: string[],
  extraEnv: Record<string, string | undefined> = {},
): Promise<Record<string, unknown>> {
  const r: CliRun = await runCli(
    ['submit', await buildFixture('basic'), '--frames', '1', ...args, '--no-wait', '--no-download', '--json'],
    env(extraEnv),
  );
  expect(r.code, r.stderr).toBe(EXIT.OK);
  const jobId = (JSON.parse(r.stdout) as { submission: { jobId: string } }).submission.jobId;
  return (await e2e.client.getJob(jobId)).requestedConfig as Record<string, unknown>;
}

describe("the profile's submission defaults", () => {
  it("renderbridge submit sends the profile's outputFormat, video and overrides", async () => {
    expect(await submitted([])).toMatchObject({
      outputFormat: 'JPEG',
      videoOutput: false,
      sampleCount: 2,
      resolution: [64, 48],
      notes: 'from the studio profile',
      frameRanges: ['1'],
    });
  }, 180_000);

  it('the environment beats the profile, and a flag beats both, field by field', async () => {
    const fromEnv = await submitted(['--samples', '3'], { RENDERBRIDGE_OUTPUT_FORMAT: 'open_exr' });
    expect(fromEnv).toMatchObject({
      outputFormat: 'OPEN_EXR',
      sampleCount: 3,
      resolution: [64, 48],
      notes: 'from the studio profile',
    });

    const fromFlags = await submitted(['--format', 'png', '--no-video', '--notes', 'from a flag'], {
      RENDERBRIDGE_OUTPUT_FORMAT: 'OPEN_EXR',
      RENDERBRIDGE_VIDEO: 'true',
    });
    expect(fromFlags).toMatchObject({ outputFormat: 'PNG', videoOutput: false, sampleCount: 2, notes: 'from a flag' });

    const bad = await runCli(['submit', 'nothing.blend', '--json'], env({ RENDERBRIDGE_OUTPUT_FORMAT: 'GIF' }));
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.stderr).toMatch(/outputFormat \(from env RENDERBRIDGE_OUTPUT_FORMAT\): "GIF" is not one of/);
  }, 240_000);

  it('submit --help says where each default comes from', async () => {
    const r = await runCli(['submit', '--help'], env());
    expect(r.code).toBe(0);
    const help = r.stdout.replace(/\s+/g, ' ');
    for (const source of [
      'env: RENDERBRIDGE_OUTPUT_FORMAT; else profile: outputFormat',
      'profile: video',
      'profile: overrides.sampleCount',
      'profile: overrides.resolution',
      'profile: downloadsDir',
    ]) {
      expect(help).toContain(source);
    }
  }, 30_000);

  it('the daemon applies them to POST /submissions under what the add-on chose in the body', async () => {
    const stateDir = path.join(home, 'state', 'renderbridge');
    let log = '';
    daemon = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'daemon', '--port', '0'], {
      env: { PATH: process.env.PATH, ...env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemon.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    daemon.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const state = await waitUntil(
      "the daemon's state file",
      async () => {
        const text = await readFile(path.join(stateDir, 'daemon.json'), 'utf8').catch(() => undefined);
        return text ? DaemonState.parse(JSON.parse(text)) : undefined;
      },
      { timeoutMs: 60_000 },
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${log}`);
    });
    const origin = `http://127.0.0.1:${state.port}`;
    const headers = { authorization: `Bearer ${state.token}`, 'content-type': 'application/json' };
    const body = {
      pack: { path: await buildFixture('basic') },
      download: false,
      settings: { frames: ['1'], format: 'PNG', renderConfig: { sampleCount: 5 } },
    };
    const res = await fetch(`${origin}/submissions`, { method: 'POST', headers, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(202);
    const id = Submission.parse(await res.json()).id;
    const jobId = await waitUntil(
      "the submission's job",
      async () => {
        const s = Submission.parse(await (await fetch(`${origin}/submissions/${id}`, { headers })).json());
        if (s.step === 'failed') throw new Error(`submission failed: ${JSON.stringify(s.error)}`);
        return s.step === 'rendering' || s.step === 'done' ? s.jobId! : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect((await e2e.client.getJob(jobId)).requestedConfig).toMatchObject({
      outputFormat: 'PNG',
      videoOutput: false,
      sampleCount: 5,
      resolution: [64, 48],
      notes: 'from the studio profile',
    });
  }, 240_000);
});
