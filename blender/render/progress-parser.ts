// Reads Blender's stdout line by line and turns it into typed progress events. Formats measured
// on Blender 3.4 (test/fixtures/logs/) and known from 4.x:
//   Fra:1 Mem:... | Time:00:00.05 | Remaining:... | Mem:..., Peak:... | Scene, ViewLayer | Sample 1/4
//   Fra:1 Mem:... | Time:00:00.06 | ... | Scene, ViewLayer | Rendering 1 / 64 samples   (EEVEE)
//   Saved: '/path/f_0001.png'       (render output, quoted)
//   Saved: /path/beauty_0001.png    (compositor File Output node, unquoted)
//    Time: 00:00.27 (Saving: 00:00.18)   (end of a frame, after every save)
//   Error: Build without OpenImageDenoiser
// Sample lines are sparse (0, 1, last), so finished frames are the reliable signal. Pure: no I/O.

export type ProgressEvent =
  | { type: 'frameStarted'; frame: number }
  | { type: 'sample'; frame: number; done: number; total: number }
  /** `frame` is the frame being rendered when the line came, null before any `Fra:` line. */
  | { type: 'saved'; frame: number | null; path: string }
  /** `seconds` is Blender's own figure for the frame (render + save); it can read 0 after the first frame. */
  | { type: 'frameFinished'; frame: number; seconds: number }
  | { type: 'error'; frame: number | null; message: string }
  | { type: 'warning'; frame: number | null; message: string };

const FRA_RE = /^Fra:(-?\d+)\s/;
const CYCLES_SAMPLE_RE = /\bSample (\d+)\s*\/\s*(\d+)/;
const EEVEE_SAMPLE_RE = /\bRendering (\d+)\s*\/\s*(\d+) samples\b/;
const SAVED_RE = /^Saved:\s+(?:'(.*)'|"(.*)"|(.+?))\s*$/;
const TIME_RE = /^\s*Time:\s*((?:\d+:)?\d+:\d+(?:\.\d+)?)\s*(?:\(|$)/;
const ERROR_RE = /^(?:Error|ERROR)\s*:\s*(.*)$/;
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
    const text = raw.replace(/\r$/, '');
    const events: ProgressEvent[] = [];
    const fra = FRA_RE.exec(text);
    if (fra) {
      const frame = Number(fra[1]);
      if (!this.inFrame || frame !== this.frame) {
        this.frame = frame;
        this.inFrame = true;
        events.push({ type: 'frameStarted', frame });
      }
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
      this.inFrame = false;
      return events;
    }
    const err = ERROR_RE.exec(text);
    if (err) return [{ type: 'error', frame: this.currentFrame, message: (err[1] ?? '').trim() }];
    const warn = WARNING_RE.exec(text);
    if (warn) return [{ type: 'warning', frame: this.currentFrame, message: (warn[1] ?? '').trim() }];
    return events;
  }

  /** Parses several lines (e.g. a captured log). */
  lines(text: string): ProgressEvent[] {
    return text.split('\n').flatMap((l) => this.line(l));
  }
}
