// A warm Blender: one long-lived process (started through run.ts) that has loaded a scene and
// applied its render settings once, then renders the runs of frames it is handed (`-s -e -j`-like,
// one render call each) through render_loop.py (beside this module). Runs are queued and written
// to Blender's stdin at once, so Blender goes from one to the next without waiting for the worker.
// Each frame has its own limits (hang detection) and events (begin, lines, done); a crash or a
// hang loses only the frame in progress, and the runs queued behind it are handed back
// (FrameNotStartedError) for another process. Knows nothing of tasks or jobs.
import { BlenderCanceledError, BlenderExitError, BlenderFrameError, FrameNotStartedError } from '../errors.js';
import { startBlender, type BlenderProcess, type BlenderRunResult } from '../run.js';
import type { BlenderLimits } from '../run-watch.js';
import type { RenderInvocation } from './render-invocation.js';
import { parseLoopLine } from './loop-lines.js';

export interface WarmBlenderOptions {
  /** The loop's invocation (warmInvocation in render-invocation.ts). */
  invocation: RenderInvocation;
  /** Working directory of Blender. */
  cwd: string;
  /** Limits while Blender starts, loads the scene and applies the settings. */
  loadLimits: BlenderLimits;
  /** Time between SIGTERM and SIGKILL when stopping it. Default 5000 ms. */
  killGraceMs?: number;
  /** Lines that belong to no frame: loading, setup (RB_DEVICE, RB_SETUP_OK, warnings), between frames. */
  onLine?: (line: string) => void;
  onSpawn?: (pid: number) => void;
}

/** Frames Blender renders in one call, as `-s start -e end -j step -a` would. */
export interface FrameRun {
  start: number;
  end: number;
  step: number;
}

export interface RunRequest {
  run: FrameRun;
  /** Limits of each frame, armed when Blender begins it. */
  limits: BlenderLimits;
  /** Aborting a run Blender has begun stops the process; a run still waiting is just dropped. */
  signal?: AbortSignal;
  /** Blender began `frame` (from here on its time is the frame's). */
  onBegin?: (frame: number) => void;
  /** Blender's lines of the frame in progress (Fra:, Saved:, Time:, errors), as they come. */
  onLine?: (frame: number, line: string) => void;
  /** Blender saved `frame`'s files; `ms` is its wall time in the worker's clock, from its beginning. */
  onDone?: (frame: number, ms: number) => void;
}

interface Pending {
  req: RunRequest;
  resolve: () => void;
  reject: (err: Error) => void;
  sent: boolean;
  /** Dropped by its caller after it was sent: Blender renders it, nobody listens. */
  abandoned: boolean;
  /** The frame in progress and when it began (performance.now()). */
  frame?: number;
  begunAt?: number;
  /** Some frame of the run has begun. */
  started: boolean;
  onAbort?: () => void;
}

export class WarmBlender {
  /** Resolves once the scene is loaded and set up (ms since the start); rejects when Blender ends before. */
  readonly ready: Promise<number>;
  /** Settles (never rejects) once the process group is gone: its exit result, or the error it ended with. */
  readonly ended: Promise<BlenderRunResult | Error>;
  private readonly proc: BlenderProcess;
  private readonly queue: Pending[] = [];
  private readonly startedAt = performance.now();
  private isReady = false;
  private gone = false;

  private constructor(private readonly opts: WarmBlenderOptions) {
    let onReady!: (ms: number) => void;
    let onNotReady!: (err: Error) => void;
    this.ready = new Promise<number>((resolve, reject) => {
      onReady = resolve;
      onNotReady = reject;
    });
    // Nobody may be waiting for `ready` when the process dies before it: not an unhandled rejection.
    this.ready.catch(() => undefined);
    this.proc = startBlender({
      ...opts.invocation,
      stdin: true,
      cwd: opts.cwd,
      timeoutMs: opts.loadLimits.totalMs,
      idleTimeoutMs: opts.loadLimits.idleMs,
      ...(opts.killGraceMs !== undefined ? { killGraceMs: opts.killGraceMs } : {}),
      ...(opts.onSpawn ? { onSpawn: opts.onSpawn } : {}),
      onLine: (_stream, line) => this.line(line, onReady),
    });
    this.ended = this.proc.result.then(
      (res) => {
        // A clean exit after `quit` fails nobody; any other exit fails what it interrupted.
        const clean = res.exitCode === 0 && this.isReady && !this.current;
        const err = clean ? undefined : exitError(res, this.current?.frame);
        this.end(err, onNotReady);
        return res;
      },
      (err: Error) => {
        this.end(err, onNotReady);
        return err;
      },
    );
  }

  /** Starts Blender on the scene; see `ready` and `ended`. Throws on forbidden arguments. */
  static start(opts: WarmBlenderOptions): WarmBlender {
    return new WarmBlender(opts);
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get argv(): readonly string[] {
    return this.proc.argv;
  }

  /** Blender's last output lines (both streams), for failure reports. */
  get lastLines(): readonly string[] {
    return this.proc.lastLines;
  }

  /** The hang limits in force now: a frame's while Blender renders it, none (0) while it waits for the next. */
  get limits(): BlenderLimits {
    return this.proc.limits;
  }

  /** False once the process is ending or gone. */
  get alive(): boolean {
    return !this.gone;
  }

  /** The run Blender is rendering a frame of, if any. */
  private get current(): Pending | undefined {
    const head = this.queue[0];
    return head?.frame !== undefined ? head : undefined;
  }

  /**
   * Queues a run of frames; resolves when Blender has rendered all of them. A run that fails
   * rejects with the run's error (the frame in progress), FrameNotStartedError when the process
   * ended before beginning it, or BlenderFrameError when Blender reported the render failed.
   */
  render(req: RunRequest): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (req.signal?.aborted) return reject(new BlenderCanceledError('canceled before it was handed to Blender'));
      if (this.gone)
        return reject(
          new FrameNotStartedError(`Blender ended before frame ${req.run.start}`, { frame: req.run.start }),
        );
      const p: Pending = { req, resolve, reject, sent: false, abandoned: false, started: false };
      p.onAbort = () => this.abort(p);
      req.signal?.addEventListener('abort', p.onAbort, { once: true });
      this.queue.push(p);
      if (this.isReady) this.send(p);
    });
  }

  /** Ends the loop once the queued runs are done (stdin command); the process exits by itself. */
  quit(): void {
    if (!this.proc.send(JSON.stringify({ cmd: 'quit' }))) this.kill();
  }

  /** Stops the process group now (SIGTERM, then SIGKILL after the grace). */
  kill(): void {
    this.gone = true;
    this.proc.stop();
  }

  private send(p: Pending): void {
    p.sent = true;
    const { start, end, step } = p.req.run;
    // A pipe that is gone fails nothing here: the exit handler hands the run back.
    this.proc.send(JSON.stringify({ cmd: 'render', start, end, step }));
  }

  private settle(p: Pending): void {
    this.queue.splice(this.queue.indexOf(p), 1);
    if (p.onAbort) p.req.signal?.removeEventListener('abort', p.onAbort);
    // Waiting for the next command is no hang.
    if (this.queue.every((q) => q.abandoned)) this.proc.limit({ totalMs: 0, idleMs: 0 });
  }

  private abort(p: Pending): void {
    if (!this.queue.includes(p) || p.abandoned) return;
    if (p.started) {
      // Stopping Blender is the only way to stop a render; `ended` rejects the run as canceled.
      this.kill();
      return;
    }
    const err = new BlenderCanceledError(`frames from ${p.req.run.start} canceled before Blender began them`);
    if (p.sent) {
      p.abandoned = true; // already in Blender's stdin: it will render it for nobody
      p.reject(err);
    } else {
      this.settle(p);
      p.reject(err);
    }
  }

  private line(line: string, onReady: (ms: number) => void): void {
    const msg = parseLoopLine(line);
    const head = this.queue[0];
    if (!msg) {
      const to = this.current;
      if (to) {
        if (!to.abandoned) to.req.onLine?.(to.frame!, line);
      } else {
        this.opts.onLine?.(line);
      }
      return;
    }
    if (msg.type === 'ready') {
      this.isReady = true;
      this.proc.limit({ totalMs: 0, idleMs: 0 });
      onReady(Math.round(performance.now() - this.startedAt));
      for (const p of this.queue) if (!p.sent) this.send(p);
      return;
    }
    const run = head?.req.run;
    const inRun = (f: number) =>
      run !== undefined && f >= run.start && f <= run.end && (f - run.start) % run.step === 0;
    if (!head || (msg.type === 'end' ? msg.start !== run!.start : !inRun(msg.frame))) {
      // Blender and the worker disagree on what it renders: nothing it says can be trusted now.
      this.opts.onLine?.(`RB_LOOP: unexpected ${line}`);
      this.kill();
      return;
    }
    if (msg.type === 'begin') {
      head.frame = msg.frame;
      head.begunAt = performance.now();
      head.started = true;
      if (head.abandoned) return;
      this.proc.limit(head.req.limits);
      head.req.onBegin?.(msg.frame);
    } else if (msg.type === 'done') {
      const ms = Math.round(performance.now() - (head.begunAt ?? performance.now()));
      head.frame = undefined;
      this.proc.limit({ totalMs: 0, idleMs: 0 });
      if (!head.abandoned) head.req.onDone?.(msg.frame, ms);
    } else {
      const failed = head.frame ?? run!.start;
      this.settle(head);
      if (head.abandoned) return;
      if (msg.error !== undefined)
        head.reject(
          new BlenderFrameError(`Blender could not render frame ${failed}: ${msg.error}`, {
            frame: failed,
            lastLines: [...this.proc.lastLines],
          }),
        );
      else head.resolve();
    }
  }

  /** The process is gone: the run in progress fails with `err`, the others are handed back. */
  private end(err: Error | undefined, onNotReady: (err: Error) => void): void {
    this.gone = true;
    if (!this.isReady) onNotReady(err ?? new BlenderExitError('Blender ended before it was ready', {}));
    for (const p of [...this.queue]) {
      this.settle(p);
      if (p.abandoned) continue;
      if (p.started && err) p.reject(err);
      else
        p.reject(new FrameNotStartedError(`Blender ended before frame ${p.req.run.start}`, { frame: p.req.run.start }));
    }
  }
}

/** Why a process that exited without a signal failed whoever waited on it. */
function exitError(res: BlenderRunResult, frame: number | undefined): BlenderExitError {
  const during = frame !== undefined ? ` while rendering frame ${frame}` : ' before it was ready';
  return new BlenderExitError(`Blender exited with code ${res.exitCode}${during}`, {
    argv: res.argv,
    exitCode: res.exitCode,
    durationMs: res.durationMs,
    lastLines: res.lastLines,
    ...(frame !== undefined ? { frame } : {}),
  });
}
