// Reads Blender's stdout line by line and turns it into typed progress events. Formats measured
// on Blender 3.4 (test/fixtures/logs/) and known from 4.x:
//   Fra:1 Mem:... | Time:00:00.05 | Remaining:... | Mem:..., Peak:... | Scene, ViewLayer | Sample 1/4
//   Fra:1 Mem:... | Time:00:00.06 | ... | Scene, ViewLayer | Rendering 1 / 64 samples   (EEVEE)
//   Saved: '/path/f_0001.png'       (render output, quoted)
//   Saved: /path/beauty_0001.png    (compositor File Output node, unquoted)
//    Time: 00:00.27 (Saving: 00:00.18)   (end of a frame, after every save)
//   Error: Build without OpenImageDenoiser
// Blender 5.x logs through its logger: each line carries a time and a category first, and the
// fields are spaced differently (measured on 5.2):
//   00:01.659  render           | Fra: 2 | Mem: 1M | Sample 4/4
//   00:01.664  render           | Saved: '/path/f_0002.png'
//   00:01.664  render           | Time: 00:00.00 (Saving: 00:00.00)
//   00:01.947  reports          | ERROR Invalid path template in File Output node. Skipping writing file.
// The prefix is dropped before parsing; a logged ERROR/FATAL is an error, a logged WARNING a warning.
// Sample lines are sparse (0, 1, last), so finished frames are the reliable signal. Pure: no I/O.
// Memory (frame statistics): `Mem:9.35M (Peak 9.42M)` is Blender's own allocations (RAM), and
// Cycles' `Mem:0.78M, Peak:0.78M` its device's (the GPU's memory on a GPU, RAM on the CPU); 5.x
// prints one `Mem: 1M` field. Sizes are binary (Blender divides by 1024*1024 for `M`).

export type ProgressEvent =
  | { type: 'frameStarted'; frame: number }
  | { type: 'sample'; frame: number; done: number; total: number }
  /** `frame` is the frame being rendered when the line came, null before any `Fra:` line. */
  | { type: 'saved'; frame: number | null; path: string }
  /** `seconds` is Blender's own figure for the frame (render + save); it can read 0 after the first frame. */
  | { type: 'frameFinished'; frame: number; seconds: number }
  | { type: 'error'; frame: number | null; message: string }
  | { type: 'warning'; frame: number | null; message: string };

/** Blender 5.x's logger prefix: elapsed time, category, `|`. */
const LOG_PREFIX_RE = /^(?:\d+:)*\d+\.\d+\s+[\w.-]+\s*\|\s?/;
/** The severity word a 5.x logged line starts with. */
const LOG_LEVEL_RE = /^(ERROR|FATAL|WARNING)\s+(.*)$/;
const FRA_RE = /^Fra:\s*(-?\d+)\s/;
const CYCLES_SAMPLE_RE = /\bSample (\d+)\s*\/\s*(\d+)/;
const EEVEE_SAMPLE_RE = /\bRendering (\d+)\s*\/\s*(\d+) samples\b/;
const SAVED_RE = /^Saved:\s+(?:'(.*)'|"(.*)"|(.+?))\s*$/;
const TIME_RE = /^\s*Time:\s*((?:\d+:)?\d+:\d+(?:\.\d+)?)\s*(?:\(|$)/;
const ERROR_RE = /^(?:Error|ERROR)\s*:\s*(.*)$/;
const SIZE = String.raw`(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?`;
/** `Mem:9.35M (Peak 9.42M)`: Blender's allocations and their peak. */
const HOST_MEM_RE = new RegExp(String.raw`^Mem:\s*${SIZE}\s*\(Peak:?\s*${SIZE}\)$`);
/** `Mem:0.78M, Peak:0.78M`: the render device's memory (Cycles). */
const DEVICE_MEM_RE = new RegExp(String.raw`^Mem:\s*${SIZE},\s*Peak:\s*${SIZE}$`);
/** `Mem: 1M` alone (5.x, and engines that report no peak). */
const PLAIN_MEM_RE = new RegExp(String.raw`^Mem:\s*${SIZE}$`);
const UNIT: Readonly<Record<string, number>> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** Peak memory of one frame as Blender printed it; null where no line said. */
export interface FrameMemory {
  /** Blender's own allocations (RAM): the `(Peak ...)` figure, or the highest plain `Mem:` reading. */
  hostPeakBytes: number | null;
  /** The render device's peak (Cycles' `Peak:`): GPU memory on a GPU. */
  devicePeakBytes: number | null;
}

function bytes(n: string | undefined, unit: string | undefined): number {
  return Math.round(Number(n) * (UNIT[unit ?? ''] ?? 1));
}
const WARNING_RE = /^Warning\s*:\s*(.*)$/;

/** Blender's `[HH:]MM:SS.ss` time codes in seconds; NaN when unreadable. */
export function parseTimecode(text: string): number {
  const parts = text.trim().split(':').map(Number);
  if (parts.length < 2 || parts.length > 3 || parts.some((n) => !Number.isFinite(n))) return NaN;
  return parts.reduce((acc, n) => acc * 60 + n, 0);
}

/**
 * Stateful parser for ONE Blender process's output (one chunk): it remembers the frame being
 * rendered, so `saved` and `frameFinished` lines (which carry no frame number) are attributed.
 */
export class BlenderLogParser {
  private frame: number | null = null;
  private inFrame = false;
  private memory: FrameMemory = { hostPeakBytes: null, devicePeakBytes: null };
  private finishedMemory: FrameMemory = { hostPeakBytes: null, devicePeakBytes: null };

  /**
   * Peak memory of the frame the last `frameFinished` event closed (read it right after that
   * event; the next frame's lines start a new reading).
   */
  get lastFrameMemory(): FrameMemory {
    return this.finishedMemory;
  }

  /** The frame in flight's reading so far, or the last finished frame's between frames. */
  get frameMemory(): FrameMemory {
    return this.inFrame ? { ...this.memory } : this.finishedMemory;
  }

  /** Frame currently being rendered, or null between frames. */
  get currentFrame(): number | null {
    return this.inFrame ? this.frame : null;
  }

  /**
   * Last frame the process reached (its latest `Fra:` line), finished or not; null before any.
   * What a failure report names: after a crash between frames `currentFrame` is already null.
   */
  get lastFrame(): number | null {
    return this.frame;
  }

  /** Parses one line (without its newline). Unknown lines give no events. */
  line(raw: string): ProgressEvent[] {
    let text = raw.replace(/\r$/, '');
    const prefix = LOG_PREFIX_RE.exec(text);
    if (prefix) {
      text = text.slice(prefix[0].length);
      const level = LOG_LEVEL_RE.exec(text);
      if (level) {
        const message = (level[2] ?? '').trim();
        return [
          level[1] === 'WARNING'
            ? { type: 'warning', frame: this.currentFrame, message }
            : { type: 'error', frame: this.currentFrame, message },
        ];
      }
    }
    const events: ProgressEvent[] = [];
    const fra = FRA_RE.exec(text);
    if (fra) {
      const frame = Number(fra[1]);
      if (!this.inFrame || frame !== this.frame) {
        this.frame = frame;
        this.inFrame = true;
        this.memory = { hostPeakBytes: null, devicePeakBytes: null };
        events.push({ type: 'frameStarted', frame });
      }
      this.readMemory(text);
      const tail = text.slice(text.lastIndexOf('|') + 1);
      const m = CYCLES_SAMPLE_RE.exec(tail) ?? EEVEE_SAMPLE_RE.exec(tail);
      if (m) events.push({ type: 'sample', frame, done: Number(m[1]), total: Number(m[2]) });
      return events;
    }
    const saved = SAVED_RE.exec(text);
    if (saved) {
      const path = saved[1] ?? saved[2] ?? saved[3] ?? '';
      events.push({ type: 'saved', frame: this.frame, path });
      return events;
    }
    const time = TIME_RE.exec(text);
    if (time && this.inFrame && this.frame !== null) {
      const seconds = parseTimecode(time[1] as string);
      events.push({ type: 'frameFinished', frame: this.frame, seconds: Number.isFinite(seconds) ? seconds : 0 });
      this.finishedMemory = this.memory;
      this.memory = { hostPeakBytes: null, devicePeakBytes: null };
      this.inFrame = false;
      return events;
    }
    const err = ERROR_RE.exec(text);
    if (err) return [{ type: 'error', frame: this.currentFrame, message: (err[1] ?? '').trim() }];
    const warn = WARNING_RE.exec(text);
    if (warn) return [{ type: 'warning', frame: this.currentFrame, message: (warn[1] ?? '').trim() }];
    return events;
  }

  /** Folds the memory fields of one `Fra:` line into the frame's peaks. */
  private readMemory(text: string): void {
    const max = (a: number | null, b: number) => (a === null || b > a ? b : a);
    for (const raw of text.split('|')) {
      // The first field of 3.x/4.x lines is `Fra:1 Mem:... (Peak ...)`.
      const field = raw.trim().replace(/^Fra:\s*-?\d+\s*/, '');
      if (!field.startsWith('Mem:')) continue;
      const host = HOST_MEM_RE.exec(field);
      if (host) {
        this.memory.hostPeakBytes = max(
          this.memory.hostPeakBytes,
          Math.max(bytes(host[1], host[2]), bytes(host[3], host[4])),
        );
        continue;
      }
      const device = DEVICE_MEM_RE.exec(field);
      if (device) {
        this.memory.devicePeakBytes = max(
          this.memory.devicePeakBytes,
          Math.max(bytes(device[1], device[2]), bytes(device[3], device[4])),
        );
        continue;
      }
      const plain = PLAIN_MEM_RE.exec(field);
      if (plain) this.memory.hostPeakBytes = max(this.memory.hostPeakBytes, bytes(plain[1], plain[2]));
    }
  }

  /** Parses several lines (e.g. a captured log). */
  lines(text: string): ProgressEvent[] {
    return text.split('\n').flatMap((l) => this.line(l));
  }
}
