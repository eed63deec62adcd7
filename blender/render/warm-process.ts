// A warm Blender: one long-lived process (started through run.ts) that has loaded a scene and
// applied its render settings once, then renders the frames it is handed, one at a time, through
// render_loop.py (beside this module). Frames are queued and written to Blender's stdin at once,
// so Blender goes from one frame to the next without waiting for the worker. Each frame has its
// own limits (hang detection) and its own line listener; a crash or a hang loses only the frame in
// progress, and the frames queued behind it are handed back (FrameNotStartedError) for another
// process. Knows nothing of tasks or jobs.
import { BlenderCanceledError, BlenderExitError, BlenderFrameError, FrameNotStartedError } from '../errors.js';
import { startBlender, type BlenderLimits, type BlenderProcess, type BlenderRunResult } from '../run.js';
import type { RenderInvocation } from './render-invocation.js';

/** What render_loop.py says on its own lines. */
export type LoopLine =
  | { type: 'ready'; seconds: number }
  | { type: 'begin'; frame: number }
  | { type: 'done'; frame: number; seconds: number }
  | { type: 'error'; frame: number; message: string };

const LOOP_LINE = /^RB_(READY|FRAME_BEGIN|FRAME_DONE|FRAME_ERROR) (\{.*\})$/;

/** Parses `RB_READY {...}`, `RB_FRAME_BEGIN {...}`, `RB_FRAME_DONE {...}`, `RB_FRAME_ERROR {...}`; undefined for other lines. */
export function parseLoopLine(line: string): LoopLine | undefined {
  const m = LOOP_LINE.exec(line);
  if (!m) return undefined;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(m[2]!) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  if (m[1] === 'READY') return { type: 'ready', seconds: num(raw.seconds) ?? 0 };
  const frame = num(raw.frame);
  if (frame === undefined) return undefined;
  if (m[1] === 'FRAME_BEGIN') return { type: 'begin', frame };
  if (m[1] === 'FRAME_DONE') return { type: 'done', frame, seconds: num(raw.seconds) ?? 0 };
  return { type: 'error', frame, message: typeof raw.message === 'string' ? raw.message : 'the render failed' };
}

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

export interface FrameRequest {
  frame: number;
  /** Limits of this frame, armed when Blender begins it. */
  limits: BlenderLimits;
  /** Aborting a frame Blender has begun stops the process; a frame still waiting is just dropped. */
  signal?: AbortSignal;
  /** Blender's lines of this frame (Fra:, Saved:, Time:, errors), as they come. */
  onLine?: (line: string) => void;
  /** Blender began the frame (from here on its time is the frame's). */
  onBegin?: () => void;
}

export interface FrameResult {
  frame: number;
  /** Wall time of the frame in the worker's clock, from Blender beginning it to its DONE line, ms. */
  ms: number;
}

interface Pending {
  req: FrameRequest;
  resolve: (r: FrameResult) => void;
  reject: (err: Error) => void;
  sent: boolean;
  /** Dropped by its caller after it was sent: Blender renders it, nobody listens. */
  abandoned: boolean;
  begunAt?: number;
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
  private lastIdleAt = performance.now();

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
        const err = clean ? undefined : exitError(res, this.current?.req.frame);
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

  /** False once the process is ending or gone. */
  get alive(): boolean {
    return !this.gone;
  }

  /** Frames handed to it and not finished (in progress and queued). */
  get pending(): number {
    return this.queue.filter((p) => !p.abandoned).length;
  }

  /** When it last ran out of frames (performance.now() clock). */
  get idleSince(): number {
    return this.lastIdleAt;
  }

  /** The frame Blender is rendering, if any. */
  private get current(): Pending | undefined {
    const head = this.queue[0];
    return head?.begunAt !== undefined ? head : undefined;
  }

  /** Queues a frame; resolves when Blender has finished it. See FrameRequest. */
  render(req: FrameRequest): Promise<FrameResult> {
    return new Promise<FrameResult>((resolve, reject) => {
      if (req.signal?.aborted) return reject(new BlenderCanceledError('frame canceled before it was handed to Blender'));
      if (this.gone) return reject(new FrameNotStartedError(`Blender ended before frame ${req.frame}`, { frame: req.frame }));
      const p: Pending = { req, resolve, reject, sent: false, abandoned: false };
      p.onAbort = () => this.abort(p);
      req.signal?.addEventListener('abort', p.onAbort, { once: true });
      this.queue.push(p);
      if (this.isReady) this.send(p);
    });
  }

  /** Ends the loop once the queued frames are done (stdin command); the process exits by itself. */
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
    if (!this.proc.send(JSON.stringify({ cmd: 'render', frame: p.req.frame }))) {
      // The pipe is gone: the exit handler hands the frame back.
    }
  }

  private settle(p: Pending): void {
    this.queue.splice(this.queue.indexOf(p), 1);
    if (p.onAbort) p.req.signal?.removeEventListener('abort', p.onAbort);
    if (this.queue.every((q) => q.abandoned)) {
      this.lastIdleAt = performance.now();
      // Waiting for the next command is no hang.
      this.proc.limit({ totalMs: 0, idleMs: 0 });
    }
  }

  private abort(p: Pending): void {
    if (!this.queue.includes(p) || p.abandoned) return;
    if (p.begunAt !== undefined) {
      // Stopping Blender is the only way to stop a frame; `ended` rejects it as canceled.
      this.kill();
      return;
    }
    const err = new BlenderCanceledError(`frame ${p.req.frame} canceled before Blender began it`);
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
        if (!to.abandoned) to.req.onLine?.(line);
      } else {
        this.opts.onLine?.(line);
      }
      return;
    }
    if (msg.type === 'ready') {
      this.isReady = true;
      this.lastIdleAt = performance.now();
      this.proc.limit({ totalMs: 0, idleMs: 0 });
      onReady(Math.round(performance.now() - this.startedAt));
      for (const p of this.queue) if (!p.sent) this.send(p);
      return;
    }
    if (!head || head.req.frame !== msg.frame || (msg.type === 'begin') === (head.begunAt !== undefined)) {
      // Blender and the worker disagree on the order of frames: nothing it says can be trusted now.
      this.opts.onLine?.(`RB_LOOP: unexpected ${line}`);
      this.kill();
      return;
    }
    if (msg.type === 'begin') {
      head.begunAt = performance.now();
      if (head.abandoned) return;
      this.proc.limit(head.req.limits);
      head.req.onBegin?.();
      return;
    }
    this.settle(head);
    if (head.abandoned) return;
    if (msg.type === 'done') head.resolve({ frame: msg.frame, ms: Math.round(performance.now() - head.begunAt!) });
    else head.reject(new BlenderFrameError(`Blender could not render frame ${msg.frame}: ${msg.message}`, { frame: msg.frame, lastLines: [...this.proc.lastLines] }));
  }

  /** The process is gone: the frame in progress fails with `err`, the others are handed back. */
  private end(err: Error | undefined, onNotReady: (err: Error) => void): void {
    this.gone = true;
    if (!this.isReady) onNotReady(err ?? new BlenderExitError('Blender ended before it was ready', {}));
    const current = this.current;
    for (const p of [...this.queue]) {
      this.settle(p);
      if (p.abandoned) continue;
      if (p === current && err) {
        p.reject(err);
      } else {
        p.reject(new FrameNotStartedError(`Blender ended before frame ${p.req.frame}`, { frame: p.req.frame }));
      }
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
