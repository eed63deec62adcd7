// blender/run.ts against the real Blender: argv, process-group kill on abort, timeouts, crashes, and
// proof that a file's own Python (registered text blocks, Python drivers) never runs on a worker.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlenderCanceledError,
  BlenderCrashError,
  BlenderStartError,
  BlenderTimeoutError,
} from '../../blender/errors.js';
import { blenderArgv, runBlender } from '../../blender/run.js';
import { BlenderVersionCache, blenderVersion, parseBlenderVersion } from '../../blender/version.js';
import { buildFixture, fixtureMarker } from '../helpers/fixtures.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-blender-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

describe('blenderArgv', () => {
  it('always starts headless, untrusted, factory, silent; file, pre args, script, args, then -- script args', () => {
    const argv = blenderArgv({
      file: 'scene.blend',
      preScriptArgs: ['-E', 'CYCLES'],
      pythonScript: 'x.py',
      args: ['-o', '/o/f_####', '-F', 'PNG', '-s', '1', '-e', '3', '-a'],
      scriptArgs: ['--out', 'r.json'],
    });
    expect(argv.slice(0, 4)).toEqual(['-b', '-Y', '--factory-startup', '-noaudio']);
    expect(argv.indexOf('scene.blend')).toBeLessThan(argv.indexOf('-E'));
    expect(argv.indexOf('-E')).toBeLessThan(argv.indexOf('--python'));
    expect(argv.indexOf('--python')).toBeLessThan(argv.indexOf('-o'));
    expect(argv.slice(argv.indexOf('-a'))).toEqual(['-a', '--', '--out', 'r.json']);
    expect(blenderArgv({})).toEqual(['-b', '-Y', '--factory-startup', '-noaudio']);
  });

  it('refuses arguments that would enable auto-run scripts, except as script arguments', () => {
    expect(() => blenderArgv({ args: ['-y'] })).toThrow(/not allowed/);
    expect(() => blenderArgv({ preScriptArgs: ['--enable-autoexec'] })).toThrow(/not allowed/);
    expect(blenderArgv({ pythonScript: 's.py', scriptArgs: ['-y'] }).slice(-2)).toEqual(['--', '-y']);
  });
});

describe('runBlender', () => {
  it('passes -Y and --factory-startup to the real process and streams its lines', async () => {
    const lines: string[] = [];
    const res = await runBlender({
      binary: BLENDER,
      args: ['--python-expr', 'import sys; print("ARGV", sys.argv[1:])'],
      onLine: (_s, l) => lines.push(l),
      timeoutMs: 60_000,
    });
    expect(res.exitCode).toBe(0);
    const argvLine = lines.find((l) => l.startsWith('ARGV'));
    expect(argvLine).toContain("'-Y'");
    expect(argvLine).toContain("'--factory-startup'");
    expect(argvLine).toContain("'-noaudio'");
    expect(res.argv).toContain('-Y');
    expect(res.lastLines.some((l) => l.startsWith('ARGV'))).toBe(true);
    expect(res.durationMs).toBeGreaterThan(0);
  });

  it('kills the whole process group on abort, children included', async () => {
    const ac = new AbortController();
    let pid = 0;
    // Blender starts a grandchild (`sleep`) in its group, then waits: both must go.
    const script =
      'import subprocess, time; subprocess.Popen(["sleep", "120"]); print("READY", flush=True); time.sleep(120)';
    const run = runBlender({
      binary: BLENDER,
      args: ['--python-expr', script],
      signal: ac.signal,
      killGraceMs: 2000,
      onSpawn: (p) => (pid = p),
      onLine: (_s, l) => {
        if (l.startsWith('READY')) ac.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(BlenderCanceledError);
    expect(pid).toBeGreaterThan(0);
    expect(groupAlive(pid)).toBe(false);
  });

  it('rejects a run that is already canceled without starting Blender', async () => {
    let spawned = false;
    const run = runBlender({ binary: BLENDER, signal: AbortSignal.abort(), onSpawn: () => (spawned = true) });
    await expect(run).rejects.toBeInstanceOf(BlenderCanceledError);
    expect(spawned).toBe(false);
  });

  it('times out as a retryable error carrying the last lines, and the group is gone', async () => {
    let pid = 0;
    const err = await runBlender({
      binary: BLENDER,
      args: ['--python-expr', 'import time; print("WORKING", flush=True); time.sleep(120)'],
      timeoutMs: 6000,
      killGraceMs: 1000,
      onSpawn: (p) => (pid = p),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlenderTimeoutError);
    const e = err as BlenderTimeoutError;
    expect(e.details.reason).toBe('timeout');
    expect(e.details.lastLines).toContain('WORKING');
    expect(groupAlive(pid)).toBe(false);
  });

  it('stops a run that prints nothing for idleTimeoutMs', async () => {
    const err = await runBlender({
      binary: BLENDER,
      args: ['--python-expr', 'import time; print("QUIET NOW", flush=True); time.sleep(120)'],
      idleTimeoutMs: 4000,
      killGraceMs: 1000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlenderTimeoutError);
    expect((err as BlenderTimeoutError).details.reason).toBe('idle');
  });

  it('reports a death by signal as a retryable crash', async () => {
    const err = await runBlender({
      binary: BLENDER,
      args: ['--python-expr', 'import os, signal; print("DYING", flush=True); os.kill(os.getpid(), signal.SIGKILL)'],
      timeoutMs: 60_000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlenderCrashError);
    expect((err as BlenderCrashError).details).toMatchObject({ reason: 'crash', signal: 'SIGKILL' });
    expect((err as BlenderCrashError).details.lastLines).toContain('DYING');
  });

  it('reports a missing binary as retryable', async () => {
    await expect(runBlender({ binary: join(work, 'no-such-blender') })).rejects.toBeInstanceOf(BlenderStartError);
  });
});

describe('untrusted files', () => {
  it("never runs the file's registered text block or Python driver, even while rendering", async () => {
    const file = await buildFixture('autoexec');
    const marker = fixtureMarker();
    await rm(marker, { force: true });
    await rm(`${marker}.driver`, { force: true });
    const out = join(work, 'autoexec');
    const res = await runBlender({
      binary: BLENDER,
      file,
      args: ['-o', `${out}/f_####`, '-F', 'PNG', '-f', '1'],
      timeoutMs: 60_000,
    });
    expect(res.exitCode).toBe(0);
    expect(await readdir(out)).toEqual(['f_0001.png']);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(`${marker}.driver`)).toBe(false);
  });

  it('control: the same file with auto-run allowed (-y) does write both markers', async () => {
    // Deliberately bypasses blender/run.ts, which cannot run without -Y: this only proves the fixture is armed.
    const file = await buildFixture('autoexec');
    const marker = fixtureMarker();
    const out = join(work, 'control');
    const r = spawnSync(
      BLENDER,
      ['-b', '-y', '--factory-startup', '-noaudio', file, '-o', `${out}/f_####`, '-f', '1'],
      {
        timeout: 60_000,
      },
    );
    expect(r.status).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(existsSync(`${marker}.driver`)).toBe(true);
    await rm(marker, { force: true });
    await rm(`${marker}.driver`, { force: true });
  });
});

describe('blenderVersion', () => {
  it('parses the banner', () => {
    expect(parseBlenderVersion('Blender 3.4.1\n\tbuild date: x')).toEqual({
      major: 3,
      minor: 4,
      patch: 1,
      text: '3.4.1',
    });
    expect(parseBlenderVersion('Blender 4.2 LTS')).toEqual({ major: 4, minor: 2, patch: 0, text: '4.2.0' });
    expect(parseBlenderVersion('no banner')).toBeUndefined();
  });

  it('asks the binary once per cache', async () => {
    const cache = new BlenderVersionCache();
    const a = await blenderVersion(BLENDER, cache);
    expect(a.major).toBeGreaterThanOrEqual(3);
    let calls = 0;
    const b = await cache.get(BLENDER, async () => {
      calls++;
      return a;
    });
    expect(b).toEqual(a);
    expect(calls).toBe(0);
  });
});
