// What render_loop.py (beside this module) says on its own lines between Blender's: ready, a
// frame begun, a frame saved, a run ended. The warm process (warm-process.ts) reads them.
/** What render_loop.py says on its own lines. */
export type LoopLine =
  | { type: 'ready'; seconds: number }
  | { type: 'begin'; frame: number }
  | { type: 'done'; frame: number; seconds: number }
  | { type: 'end'; start: number; error?: string };

const LOOP_LINE = /^RB_(READY|FRAME_BEGIN|FRAME_DONE|RUN_END) (\{.*\})$/;

/**
 * Parses `RB_READY {...}`, `RB_FRAME_BEGIN {...}`, `RB_FRAME_DONE {...}`, `RB_RUN_END {...}`;
 * undefined for other lines.
 */
export function parseLoopLine(line: string): LoopLine | undefined {
  if (!line.startsWith('RB_')) return undefined;
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
  if (m[1] === 'RUN_END') {
    const start = num(raw.start);
    if (start === undefined) return undefined;
    return typeof raw.error === 'string' ? { type: 'end', start, error: raw.error } : { type: 'end', start };
  }
  const frame = num(raw.frame);
  if (frame === undefined) return undefined;
  if (m[1] === 'FRAME_BEGIN') return { type: 'begin', frame };
  return { type: 'done', frame, seconds: num(raw.seconds) ?? 0 };
}
