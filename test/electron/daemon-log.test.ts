// The daemon's log file (electron/core/daemon-log.ts), read back the way a person would open it:
// one line per output line with a timestamp and the stream, partial chunks joined, keys and tokens
// masked, mode 0600 in a 0700 folder, rotation at the size limit keeping the configured number of
// old files, and a disk error that neither throws nor repeats. Then a real `renderbridge daemon`
// under DaemonSupervisor (as main/index.ts wires it): its startup banner lands in the file, and
// after a kill -9 and restart the file has grown (appended, not truncated).
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStateFile } from '../../daemon/state-file.js';
import { DaemonLog, maskSecrets } from '../../electron/core/daemon-log.js';
import { DaemonSupervisor } from '../../electron/core/supervisor.js';
import { EMPTY_TRAY_STATE, trayMenu } from '../../electron/core/tray-model.js';
import { waitUntil } from '../helpers/e2e.js';
import { realDaemonLaunch } from './real-daemon.js';

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (stdout|stderr|app) (.*)$/;
const KEY = `rb_live_${'A1b2-C3d4_'.repeat(4)}xyz`; // 8 + 43 characters, the API key's shape
const TOKEN = 'Zq9_-x'.repeat(7) + 'k'; // 43 base64url characters, the daemon token's shape
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-daemon-log-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function linesOf(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text.split('\n').slice(0, -1);
}

describe('daemon log file', () => {
  it('writes one timestamped line per output line, naming the stream, joining partial chunks', async () => {
    const dir = path.join(work, 'lines', 'logs');
    const log = new DaemonLog({ dir });
    log.output('renderbridge daemon 0.1.0 list', 'stderr');
    log.output('{"level":30,"msg":"half', 'stdout');
    log.output('ening on http://127.0.0.1:1234\r\n  service: x\n', 'stderr');
    log.output(' a line"}\nnext', 'stdout');
    log.note('daemon ended (SIGKILL)');
    log.output(' unfinished', 'stdout');
    log.close();

    const lines = await linesOf(log.file);
    expect(log.file).toBe(path.join(dir, 'daemon.log'));
    for (const l of lines) expect(l).toMatch(LINE);
    const parsed = lines.map((l) => l.match(LINE)!);
    expect(parsed.map((m) => `${m[2]} ${m[3]}`)).toEqual([
      'stderr renderbridge daemon 0.1.0 listening on http://127.0.0.1:1234',
      'stderr   service: x',
      'stdout {"level":30,"msg":"half a line"}',
      // The note first writes what waited without a newline, so nothing is lost at a restart.
      'stdout next',
      'app daemon ended (SIGKILL)',
      'stdout  unfinished',
    ]);
    expect(Math.abs(Date.parse(parsed[0]![1]!) - Date.now())).toBeLessThan(60_000);
  });

  it('masks API keys, Bearer credentials and token-shaped words, also when split across chunks', async () => {
    const dir = path.join(work, 'masking');
    const custom = 'a-short-but-known-secret!';
    const log = new DaemonLog({ dir, secrets: () => [custom, null] });
    log.output(`using key ${KEY.slice(0, 20)}`, 'stdout');
    log.output(`${KEY.slice(20)} for the service\n`, 'stdout');
    log.output(`GET /jobs authorization: Bearer ${TOKEN}\n`, 'stderr');
    log.output(`state {"token":"${TOKEN}"} and ${custom} end\n`, 'stdout');
    log.output('keys are prefixed rb_live_ and job 3f2b6a3c-1d2e-4f5a-8b9c-0d1e2f3a4b5c stays\n', 'stdout');
    log.close();

    const text = await readFile(log.file, 'utf8');
    expect(text).not.toContain(KEY.slice(8));
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(custom);
    const bodies = text
      .split('\n')
      .slice(0, -1)
      .map((l) => l.match(LINE)![3]);
    expect(bodies).toEqual([
      'using key rb_live_[redacted] for the service',
      'GET /jobs authorization: Bearer [redacted]',
      'state {"token":"[redacted]"} and [redacted] end',
      'keys are prefixed rb_live_ and job 3f2b6a3c-1d2e-4f5a-8b9c-0d1e2f3a4b5c stays',
    ]);
    expect(maskSecrets(`x-api-key=${KEY}`)).toBe('x-api-key=rb_live_[redacted]');
  });

  it('creates the file with mode 0600 in a 0700 folder, and appends to it across app runs', async () => {
    const dir = path.join(work, 'modes', 'state', 'logs');
    const first = new DaemonLog({ dir });
    first.output('first run\n', 'stdout');
    first.close();
    const second = new DaemonLog({ dir });
    second.output('second run\n', 'stdout');
    second.close();
    if (process.platform !== 'win32') {
      expect((await stat(second.file)).mode & 0o777).toBe(0o600);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
    }
    expect((await linesOf(second.file)).map((l) => l.match(LINE)![3])).toEqual(['first run', 'second run']);
  });

  it('rotates at the size limit, keeping the configured number of old files, oldest dropped', async () => {
    const dir = path.join(work, 'rotation');
    const maxBytes = 1000;
    const log = new DaemonLog({ dir, maxBytes, keep: 2 });
    // Each line is 62 bytes (timestamp, stream, text, newline): 16 fit in a file, 100 fill 7 files.
    for (let i = 0; i < 100; i++) log.output(`line ${String(i).padStart(3, '0')} ${'x'.repeat(20)}\n`, 'stdout');
    log.close();

    expect((await readdir(dir)).sort()).toEqual(['daemon.log', 'daemon.log.1', 'daemon.log.2']);
    const numbers = async (f: string) =>
      (await linesOf(path.join(dir, f))).map((l) => Number(l.match(LINE)![3]!.slice(5, 8)));
    const [older, old, current] = [
      await numbers('daemon.log.2'),
      await numbers('daemon.log.1'),
      await numbers('daemon.log'),
    ];
    for (const f of ['daemon.log.2', 'daemon.log.1', 'daemon.log'])
      expect((await stat(path.join(dir, f))).size).toBeLessThanOrEqual(maxBytes);
    expect(older).toHaveLength(16);
    expect(old).toHaveLength(16);
    // The newest lines are in daemon.log, and the three files follow each other without a gap.
    expect(current.at(-1)).toBe(99);
    expect([...older, ...old, ...current]).toEqual(
      Array.from(
        { length: older.length + old.length + current.length },
        (_, i) => 100 - older.length - old.length - current.length + i,
      ),
    );

    // A new run counts what is already in the file against the limit.
    const again = new DaemonLog({ dir, maxBytes, keep: 2 });
    for (let i = 0; i < 16; i++) again.output(`line ${String(100 + i)} ${'x'.repeat(20)}\n`, 'stdout');
    again.close();
    expect(await numbers('daemon.log.1')).toEqual(
      current.concat(Array.from({ length: 16 - current.length }, (_, i) => 100 + i)),
    );
    expect(await numbers('daemon.log.2')).toEqual(old);
  });

  it('reports a disk error once, never throws, and drops output after it', async () => {
    const blocker = path.join(work, 'not-a-folder');
    await writeFile(blocker, 'a file where the log folder should be');
    const errors: Error[] = [];
    const log = new DaemonLog({ dir: path.join(blocker, 'logs'), onError: (e) => errors.push(e) });
    expect(() => {
      log.output('one\n', 'stdout');
      log.output('two\nthree', 'stderr');
      log.note('daemon starting');
      log.close();
    }).not.toThrow();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/ENOTDIR|EEXIST/);
    expect(existsSync(path.join(blocker, 'logs'))).toBe(false);
  });

  it('is offered as "Open daemon log" in the tray menu when the app gives its path', () => {
    const stopped = new DaemonSupervisor({ command: process.execPath, args: [], stateDir: work }).current;
    const file = path.join(work, 'logs', 'daemon.log');
    const items = trayMenu(EMPTY_TRAY_STATE, stopped, { outputsDir: '/o', daemonLog: file });
    expect(items).toContainEqual({
      kind: 'item',
      label: 'Open daemon log',
      enabled: true,
      action: { type: 'openLog', path: file },
    });
    expect(
      trayMenu(EMPTY_TRAY_STATE, stopped, { outputsDir: '/o' }).some(
        (i) => i.kind === 'item' && i.label === 'Open daemon log',
      ),
    ).toBe(false);
  });

  it('holds a real daemon’s startup output, and keeps it through a kill -9 restart', async () => {
    const stateDir = path.join(work, 'real-state');
    let sup: DaemonSupervisor | null = null;
    const log = new DaemonLog({ dir: path.join(stateDir, 'logs'), secrets: () => [sup?.current.token] });
    sup = new DaemonSupervisor({
      ...realDaemonLaunch(stateDir, 'info'),
      initialBackoffMs: 300,
      output: log.output,
    });
    const supervisor = sup;
    supervisor.onChange((s) => log.noteStatus(s));
    const banner = (port: number) => `stderr renderbridge daemon 0.1.0 listening on http://127.0.0.1:${port}`;
    try {
      supervisor.start();
      const first = await supervisor.waitUntilRunning(60_000);
      await waitUntil(
        'the startup banner in the log',
        async () => (await readFile(log.file, 'utf8').catch(() => '')).includes(banner(first.port!)),
        { timeoutMs: 10_000 },
      );
      const before = await readFile(log.file, 'utf8');
      expect(before).toContain(`app daemon starting (pid ${first.pid})`);
      expect(before).toMatch(/ stdout \{"level":30,.*"msg":"daemon listening on 127\.0\.0\.1"\}/);
      expect(before).toContain(`app daemon running (pid ${first.pid}, port ${first.port})`);
      expect((await stat(log.file)).mode & 0o777).toBe(0o600);

      process.kill(first.pid!, 'SIGKILL');
      const second = await waitUntil(
        'a restarted daemon',
        () =>
          supervisor.current.state === 'running' && supervisor.current.pid !== first.pid
            ? supervisor.current
            : undefined,
        { timeoutMs: 60_000 },
      );
      await waitUntil(
        'the second banner in the log',
        async () => (await readFile(log.file, 'utf8')).includes(banner(second.port!)),
        { timeoutMs: 10_000 },
      );
      await supervisor.stop();
      log.close();

      const after = await readFile(log.file, 'utf8');
      // Appended: the first run's lines are still there, byte for byte, followed by the second's.
      expect(after.startsWith(before)).toBe(true);
      const tail = after.slice(before.length);
      expect(tail).toContain('app daemon ended (SIGKILL)');
      expect(tail.indexOf('app daemon ended (SIGKILL)')).toBeLessThan(tail.indexOf(banner(second.port!)));
      expect(tail).toMatch(/app daemon stopped \((SIGTERM|exit 0)\)/);
      for (const l of after.split('\n').slice(0, -1)) expect(l).toMatch(LINE);
      // The tokens of both runs (in the state file, never printed) stay out of the log.
      expect(after).not.toContain(first.token!);
      expect(after).not.toContain(second.token!);
      expect((await readStateFile(stateDir)).state).toBeNull();
    } finally {
      await supervisor.stop();
      log.close();
    }
  }, 180_000);
});
