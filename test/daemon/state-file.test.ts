// The state file: where local clients find the daemon. Private (0600 in a 0700 folder), gone after
// close, guarding against a second daemon, replaced when stale; a taken port is a clear error.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonStartError } from '../../daemon/server.js';
import { newToken, readStateFile, removeStateFile, stateFilePath, writeStateFile } from '../../daemon/state-file.js';
import { DaemonState } from '../../shared/daemon/api.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { rawRequest, startTestDaemon } from './harness.js';

let svc: TestService;
let root: string;

beforeAll(async () => {
  svc = await startTestService();
  root = await mkdtemp(path.join(tmpdir(), 'rb-state-'));
});
afterAll(async () => {
  await svc?.close();
  await rm(root, { recursive: true, force: true });
});

const mode = (p: string): number => statSync(p).mode & 0o777;

describe('daemon state file', () => {
  it('is written with mode 0600 in a folder made 0700, holds port, pid and token, is removed on close', async () => {
    const stateDir = path.join(root, 'fresh', 'renderbridge');
    const td = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir });
    const file = stateFilePath(stateDir);
    expect(td.daemon.stateFile).toBe(file);
    expect(mode(stateDir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    const state = DaemonState.parse(JSON.parse(await readFile(file, 'utf8')));
    expect(state).toMatchObject({
      version: 1,
      pid: process.pid,
      port: td.daemon.port,
      token: td.daemon.token,
      daemonVersion: '9.8.7-test',
    });
    expect(state.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // No temp files left beside it.
    expect(spawnSync('ls', ['-A', stateDir]).stdout.toString().trim()).toBe('daemon.json');
    await td.close();
    expect(existsSync(file)).toBe(false);
  });

  it('narrows an existing, wider folder to 0700', async () => {
    const stateDir = path.join(root, 'wide');
    await mkdir(stateDir, { mode: 0o755 });
    await chmod(stateDir, 0o755);
    const td = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir });
    try {
      expect(mode(stateDir)).toBe(0o700);
      expect(mode(stateFilePath(stateDir))).toBe(0o600);
    } finally {
      await td.close();
    }
  });

  it('refuses a second daemon while the first runs, naming its pid and how to stop it', async () => {
    const stateDir = path.join(root, 'second');
    const first = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir });
    try {
      const err = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir }).then(
        (d) => d.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DaemonStartError);
      const e = err as DaemonStartError;
      expect(e.code).toBe('ALREADY_RUNNING');
      expect(e.pid).toBe(process.pid);
      expect(e.message).toContain(`pid ${process.pid}`);
      expect(e.message).toContain(`kill ${process.pid}`);
      expect(e.message).toContain(`127.0.0.1:${first.daemon.port}`);
      // The first daemon's file and token are untouched, and it still answers.
      expect((await readStateFile(stateDir)).state?.token).toBe(first.daemon.token);
      const health = await rawRequest(`${first.daemon.origin}/health`, {
        headers: { authorization: `Bearer ${first.daemon.token}` },
      });
      expect(health.status).toBe(200);
    } finally {
      await first.close();
    }
    // Once it is stopped, a new daemon starts in the same folder.
    const again = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir });
    await again.close();
  });

  it('replaces a stale state file left by a daemon that died', async () => {
    const stateDir = path.join(root, 'stale');
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid;
    await writeStateFile(stateDir, {
      version: 1,
      pid: dead,
      port: 9,
      token: newToken(),
      startedAt: new Date().toISOString(),
      daemonVersion: 'old',
    });
    const td = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir });
    try {
      expect((await readStateFile(stateDir)).state).toMatchObject({
        pid: process.pid,
        port: td.daemon.port,
        token: td.daemon.token,
      });
    } finally {
      await td.close();
    }
  });

  it("leaves a newer daemon's state file alone on removal", async () => {
    const stateDir = path.join(root, 'newer');
    const theirs = newToken();
    await writeStateFile(stateDir, {
      version: 1,
      pid: process.pid,
      port: 1234,
      token: theirs,
      startedAt: new Date().toISOString(),
      daemonVersion: 'x',
    });
    expect(await removeStateFile(stateDir, newToken())).toBe(false);
    expect((await readStateFile(stateDir)).state?.token).toBe(theirs);
    expect(await removeStateFile(stateDir, theirs)).toBe(true);
    expect((await readStateFile(stateDir)).state).toBeNull();
  });

  it('reports a port taken by another program clearly, and writes no state file', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const stateDir = path.join(root, 'port');
    try {
      const err = await startTestDaemon({ serviceUrl: svc.baseUrl, stateDir, port }).then(
        (d) => d.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DaemonStartError);
      expect((err as DaemonStartError).code).toBe('PORT_IN_USE');
      expect((err as Error).message).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect((err as Error).message).toContain('--port');
      expect(existsSync(stateFilePath(stateDir))).toBe(false);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
