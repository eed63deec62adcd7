// Runs the bridge daemon as a child process and keeps it running: a daemon that dies is started
// again after an exponential back-off (reset once a run stayed up `healthyAfterMs`), and stop()
// ends it (SIGTERM, then SIGKILL after `stopTimeoutMs`). The daemon is `running` once its state
// file names the child's pid and GET /health answers to its token; the port and token come from
// that file. A daemon already running on the same state folder (started by hand, or by another
// program) is used as it is rather than fought: the supervisor watches it (`external: true`),
// never stops it, and starts its own once it is gone. State changes are reported to listeners
// (the tray's icon and tooltip).
import { spawn, type ChildProcess } from 'node:child_process';
import { findLiveDaemon } from '../../daemon/state-file.js';

export type DaemonRunState = 'stopped' | 'starting' | 'running' | 'crashed';

export interface DaemonStatus {
  state: DaemonRunState;
  pid: number | null;
  /** `http://127.0.0.1:<port>` while running. */
  origin: string | null;
  port: number | null;
  token: string | null;
  /** Times the daemon was started again after dying. */
  restarts: number;
  /** How the last run ended (`exit 1`, `SIGKILL`), or null. */
  lastExit: string | null;
  /** When the next start is due (ms since epoch) while crashed. */
  nextStartAt: number | null;
  /** True while the running daemon is one this supervisor did not start (it is never stopped by it). */
  external: boolean;
}

export interface SupervisorOptions {
  /** Executable to start (the packaged app: its own binary with ELECTRON_RUN_AS_NODE=1). */
  command: string;
  /** Its arguments, e.g. [bin/renderbridge.js, 'daemon', '--state-dir', DIR]. */
  args: readonly string[];
  /** The daemon's state folder (must match the --state-dir the command uses). */
  stateDir: string;
  /** Environment of the child. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** First restart delay. Default 500 ms; doubled after each crash up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  /** Longest restart delay. Default 30000 ms. */
  maxBackoffMs?: number;
  /** A run that lasted this long resets the back-off. Default 10000 ms. */
  healthyAfterMs?: number;
  /** Wait after SIGTERM before SIGKILL. Default 5000 ms. */
  stopTimeoutMs?: number;
  /** How often the state file is probed while starting. Default 200 ms. */
  probeIntervalMs?: number;
  /** How often an external daemon is checked to still be there. Default 2000 ms. */
  externalCheckMs?: number;
  /** Receives the child's stdout/stderr. Default: discarded. */
  output?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

type Listener = (status: DaemonStatus) => void;

export class DaemonSupervisor {
  private child: ChildProcess | null = null;
  private status: DaemonStatus = {
    state: 'stopped',
    pid: null,
    origin: null,
    port: null,
    token: null,
    restarts: 0,
    lastExit: null,
    nextStartAt: null,
    external: false,
  };
  private readonly listeners = new Set<Listener>();
  private failures = 0;
  private wanted = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private adopting = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private startedAt = 0;

  constructor(private readonly options: SupervisorOptions) {}

  get current(): DaemonStatus {
    return { ...this.status };
  }

  /** Calls `listener` at every change; returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the daemon (no-op while it runs) and keeps it running until stop(). */
  start(): void {
    this.wanted = true;
    if (this.child || this.restartTimer || this.adopting) return;
    void this.adoptOrSpawn();
  }

  /** Resolves once the daemon is running (rejects after `timeoutMs`, default 30000). */
  waitUntilRunning(timeoutMs = 30_000): Promise<DaemonStatus> {
    if (this.status.state === 'running') return Promise.resolve(this.current);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(
          new Error(
            `the daemon was not running after ${timeoutMs} ms (state ${this.status.state}, last ` +
              `exit ${this.status.lastExit ?? 'none'})`,
          ),
        );
      }, timeoutMs);
      const off = this.onChange((s) => {
        if (s.state !== 'running') return;
        clearTimeout(timer);
        off();
        resolve(s);
      });
    });
  }

  /** Stops supervising and ends the daemon: SIGTERM, then SIGKILL after `stopTimeoutMs`. */
  async stop(): Promise<void> {
    this.wanted = false;
    this.clearTimers();
    const child = this.child;
    if (!child) {
      // An external daemon is left running: it is not ours to stop.
      this.update({
        state: 'stopped',
        pid: null,
        origin: null,
        port: null,
        token: null,
        nextStartAt: null,
        external: false,
      });
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), this.options.stopTimeoutMs ?? 5000);
    await exited;
    clearTimeout(killer);
  }

  /** Uses a daemon that already answers on the state folder, else starts one. */
  private async adoptOrSpawn(): Promise<void> {
    this.adopting = true;
    const live = await findLiveDaemon(this.options.stateDir, 1000).catch(() => null);
    this.adopting = false;
    if (!this.wanted || this.child) return;
    if (!live) {
      this.spawnChild();
      return;
    }
    this.update({
      state: 'running',
      pid: live.pid,
      origin: `http://127.0.0.1:${live.port}`,
      port: live.port,
      token: live.token,
      external: true,
      nextStartAt: null,
    });
    // Checked now and then: once it is gone, this supervisor starts its own.
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.wanted) void this.adoptOrSpawn();
    }, this.options.externalCheckMs ?? 2000);
  }

  private spawnChild(): void {
    const child = spawn(this.options.command, [...this.options.args], {
      env: this.options.env ?? process.env,
      stdio: ['ignore', this.options.output ? 'pipe' : 'ignore', this.options.output ? 'pipe' : 'ignore'],
    });
    this.child = child;
    this.startedAt = Date.now();
    const output = this.options.output;
    if (output) {
      child.stdout?.setEncoding('utf8').on('data', (c: string) => output(c, 'stdout'));
      child.stderr?.setEncoding('utf8').on('data', (c: string) => output(c, 'stderr'));
    }
    child.once('error', (err) => {
      // Not startable (ENOENT...): 'exit' may never come, so treat it as one.
      this.onExit(child, `error: ${err.message}`);
    });
    child.once('exit', (code, signal) => this.onExit(child, signal ?? `exit ${code}`));
    this.update({
      state: 'starting',
      pid: child.pid ?? null,
      origin: null,
      port: null,
      token: null,
      nextStartAt: null,
      external: false,
    });
    this.probe(child);
  }

  private probe(child: ChildProcess): void {
    const interval = this.options.probeIntervalMs ?? 200;
    const tick = async (): Promise<void> => {
      this.probeTimer = null;
      if (this.child !== child) return;
      const live = await findLiveDaemon(this.options.stateDir, 1000).catch(() => null);
      if (this.child !== child) return;
      if (live && live.pid === child.pid) {
        this.update({ state: 'running', origin: `http://127.0.0.1:${live.port}`, port: live.port, token: live.token });
        return;
      }
      this.probeTimer = setTimeout(() => void tick(), interval);
    };
    this.probeTimer = setTimeout(() => void tick(), interval);
  }

  private onExit(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    this.child = null;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    if (!this.wanted) {
      this.update({
        state: 'stopped',
        pid: null,
        origin: null,
        port: null,
        token: null,
        lastExit: how,
        nextStartAt: null,
      });
      return;
    }
    if (Date.now() - this.startedAt >= (this.options.healthyAfterMs ?? 10_000)) this.failures = 0;
    const delay = backoffMs(this.failures, this.options.initialBackoffMs ?? 500, this.options.maxBackoffMs ?? 30_000);
    this.failures += 1;
    this.update({
      state: 'crashed',
      pid: null,
      origin: null,
      port: null,
      token: null,
      lastExit: how,
      nextStartAt: Date.now() + delay,
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.wanted) return;
      this.status.restarts += 1;
      void this.adoptOrSpawn();
    }, delay);
  }

  private clearTimers(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.restartTimer = null;
    this.probeTimer = null;
  }

  private update(patch: Partial<DaemonStatus>): void {
    const next = { ...this.status, ...patch };
    // Listeners hear about changes only (an external daemon is re-checked every few seconds).
    if ((Object.keys(next) as (keyof DaemonStatus)[]).every((k) => next[k] === this.status[k])) return;
    this.status = next;
    const snapshot = this.current;
    for (const l of this.listeners) l(snapshot);
  }
}

/** Delay before restart number `failures + 1`: initial * 2^failures, at most `max`. */
export function backoffMs(failures: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(failures, 30));
}
