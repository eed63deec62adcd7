// Daemon supervision (electron/core/supervisor.ts) with a real daemon child process, started the
// way a user's machine would: `renderbridge daemon` (here through tsx from the sources). Killed
// with SIGKILL, it is started again with a new pid and its state file is refreshed (new pid,
// port and token); stop() on quit leaves no process and no state file. The back-off between
// restarts is checked with a command that dies at once. The Electron tray around it cannot run
// here (no Electron binary); it only forwards these states to the icon and tooltip. The tray's
// SSE client follows the daemon through the restart (new port and token).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive, readStateFile } from '../../daemon/state-file.js';
import { DaemonEvents } from '../../electron/core/daemon-events.js';
import { backoffMs, DaemonSupervisor, type DaemonStatus } from '../../electron/core/supervisor.js';
import { waitUntil } from '../helpers/e2e.js';
import { startTestDaemon } from '../daemon/harness.js';
import { realDaemonLaunch } from './real-daemon.js';

let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-supervisor-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

function daemonSupervisor(stateDir: string, log: string[], externalCheckMs?: number): DaemonSupervisor {
  return new DaemonSupervisor({
    ...realDaemonLaunch(stateDir, 'warn'),
    initialBackoffMs: 300,
    ...(externalCheckMs ? { externalCheckMs } : {}),
    output: (c) => log.push(c),
  });
}

describe('daemon supervision', () => {
  it('restarts a killed daemon with a new pid and a refreshed state file, and stops it on quit', async () => {
    const stateDir = path.join(work, 'state');
    const log: string[] = [];
    const sup = daemonSupervisor(stateDir, log);
    const seen: DaemonStatus['state'][] = [];
    // The tray's event stream follows the daemon through restarts, as main/index.ts wires it.
    const opened: string[] = [];
    const events = new DaemonEvents({
      connection: () =>
        sup.current.state === 'running' ? { origin: sup.current.origin!, token: sup.current.token! } : null,
      onOpen: (c) => opened.push(c.token),
      onEvent: () => {},
      reconnectMs: 200,
    });
    sup.onChange((s) => {
      seen.push(s.state);
      if (s.state === 'running') events.reconnect();
    });
    try {
      sup.start();
      events.start();
      const first = await sup.waitUntilRunning(60_000);
      await waitUntil('the event stream to open', () => opened.includes(first.token!), { timeoutMs: 10_000 });
      const state1 = (await readStateFile(stateDir)).state!;
      expect(state1.pid).toBe(first.pid);
      expect(first).toMatchObject({
        state: 'running',
        port: state1.port,
        token: state1.token,
        origin: `http://127.0.0.1:${state1.port}`,
      });
      const health = await fetch(`${first.origin}/health`, { headers: { authorization: `Bearer ${first.token}` } });
      expect(health.status).toBe(200);

      process.kill(first.pid!, 'SIGKILL');
      await waitUntil(
        'the supervisor to see the crash',
        () => sup.current.state === 'crashed' || sup.current.restarts > 0,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      const second = await waitUntil(
        'a restarted daemon',
        () => (sup.current.state === 'running' && sup.current.pid !== first.pid ? sup.current : undefined),
        { timeoutMs: 60_000 },
      );
      expect(second.restarts).toBe(1);
      expect(second.lastExit).toBe('SIGKILL');
      expect(isProcessAlive(first.pid!)).toBe(false);
      const state2 = (await readStateFile(stateDir)).state!;
      expect(state2.pid).toBe(second.pid);
      expect(state2.pid).not.toBe(state1.pid);
      expect(state2.token).not.toBe(state1.token);
      expect(
        (await fetch(`${second.origin}/health`, { headers: { authorization: `Bearer ${state2.token}` } })).status,
      ).toBe(200);
      expect(seen).toEqual(['starting', 'running', 'crashed', 'starting', 'running']);
      // The stream reconnected to the new daemon, with its new token.
      await waitUntil('the event stream to reopen on the new daemon', () => opened.includes(second.token!), {
        timeoutMs: 10_000,
      });

      await sup.stop();
      expect(sup.current).toMatchObject({ state: 'stopped', pid: null, origin: null, token: null });
      expect(isProcessAlive(second.pid!)).toBe(false);
      // The daemon ended cleanly on SIGTERM: it removed its state file.
      expect((await readStateFile(stateDir)).state).toBeNull();
    } finally {
      await events.stop();
      await sup.stop();
    }
  }, 180_000);

  it('uses a daemon already running on the state folder, never stops it, starts its own once it is gone', async () => {
    const stateDir = path.join(work, 'shared-state');
    // A daemon the user started by hand (here in this test process) on the same state folder.
    const byHand = await startTestDaemon({ serviceUrl: 'http://127.0.0.1:9/api/external/v1', stateDir });
    const watcher = daemonSupervisor(stateDir, [], 200);
    watcher.start();
    expect(await watcher.waitUntilRunning(10_000)).toMatchObject({
      state: 'running',
      external: true,
      pid: process.pid,
      port: byHand.daemon.port,
      token: byHand.daemon.token,
    });
    await watcher.stop();
    // Quitting the tray leaves a daemon it did not start alone.
    expect(
      (await fetch(`${byHand.daemon.origin}/health`, { headers: { authorization: `Bearer ${byHand.daemon.token}` } }))
        .status,
    ).toBe(200);

    const sup = daemonSupervisor(stateDir, [], 200);
    const states: string[] = [];
    sup.onChange((st) => states.push(`${st.state}${st.external ? ' (external)' : ''}`));
    try {
      sup.start();
      await sup.waitUntilRunning(10_000);
      await byHand.close();
      const own = await waitUntil(
        'its own daemon',
        () => (sup.current.state === 'running' && !sup.current.external ? sup.current : undefined),
        { timeoutMs: 60_000 },
      );
      expect(own.pid).not.toBe(process.pid);
      expect((await readStateFile(stateDir)).state?.pid).toBe(own.pid);
      // Re-checks of the external daemon were not announced as changes.
      expect(states).toEqual(['running (external)', 'starting', 'running']);
    } finally {
      await sup.stop();
    }
    expect((await readStateFile(stateDir)).state).toBeNull();
  }, 120_000);

  it('waits longer after each quick crash and resets the wait after a healthy run', async () => {
    expect([0, 1, 2, 3, 10].map((n) => backoffMs(n, 500, 30_000))).toEqual([500, 1000, 2000, 4000, 30_000]);

    const starts: number[] = [];
    const crashing = new DaemonSupervisor({
      command: process.execPath,
      args: ['-e', 'process.exit(3)'],
      stateDir: path.join(work, 'none'),
      initialBackoffMs: 100,
      maxBackoffMs: 10_000,
    });
    const exits: string[] = [];
    crashing.onChange((s) => {
      if (s.state === 'starting') starts.push(Date.now());
      if (s.state === 'crashed') exits.push(s.lastExit!);
    });
    crashing.start();
    await waitUntil('four starts', () => starts.length >= 4, { timeoutMs: 20_000, intervalMs: 10 });
    await crashing.stop();
    expect(crashing.current).toMatchObject({ state: 'stopped', pid: null });
    expect(crashing.current.restarts).toBeGreaterThanOrEqual(3);
    expect(exits.slice(0, 3)).toEqual(['exit 3', 'exit 3', 'exit 3']);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(100);
    expect(gaps[1]).toBeGreaterThanOrEqual(200);
    expect(gaps[2]).toBeGreaterThanOrEqual(400);

    // Runs that last longer than healthyAfterMs count as healthy: the wait stays at its first value.
    const healthyStarts: number[] = [];
    const flaky = new DaemonSupervisor({
      command: process.execPath,
      args: ['-e', 'setTimeout(() => process.exit(1), 300)'],
      stateDir: path.join(work, 'none'),
      initialBackoffMs: 100,
      healthyAfterMs: 200,
    });
    flaky.onChange((s) => s.state === 'crashed' && healthyStarts.push(s.nextStartAt! - Date.now()));
    flaky.start();
    await waitUntil('three crashes', () => healthyStarts.length >= 3, { timeoutMs: 20_000, intervalMs: 10 });
    await flaky.stop();
    expect(healthyStarts.every((d) => d <= 100)).toBe(true);
  }, 60_000);

  it('kills a daemon that ignores SIGTERM once the stop timeout passes', async () => {
    // 'ready' is printed once the SIGTERM handler is in place: stopping before it would test nothing.
    let ready!: () => void;
    const printedReady = new Promise<void>((resolve) => (ready = resolve));
    const stubborn = new DaemonSupervisor({
      command: process.execPath,
      args: ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); console.log('ready')"],
      stateDir: path.join(work, 'none'),
      stopTimeoutMs: 300,
      output: (chunk) => chunk.includes('ready') && ready(),
    });
    stubborn.start();
    await printedReady;
    const pid = stubborn.current.pid!;
    const t0 = Date.now();
    await stubborn.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(stubborn.current).toMatchObject({ state: 'stopped', lastExit: 'SIGKILL' });
    expect(isProcessAlive(pid)).toBe(false);
  });
});
