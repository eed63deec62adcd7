// Reading the daemon's `GET /events` stream (DaemonClient.openEvents): Server-Sent Events framing
// (`event:`, `data:`, `retry:` lines, a blank line ends a frame) and each frame's JSON checked
// against its DAEMON_EVENTS schema. Kept apart from the reconnecting loop (electron/core) so any
// client reads the stream the same way.
import { DAEMON_EVENTS, type DaemonEvent, type DaemonEventName } from './api.js';

/** What one frame said: an event (or why it was unusable), and a new reconnect delay when it had `retry:`. */
export interface EventFrame {
  event?: DaemonEvent;
  /** Why a named frame was dropped (not JSON, or off its schema). */
  problem?: string;
  retryMs?: number;
}

/**
 * Parses one frame (the text between blank lines). Comments, unknown event names and frames without data give no event.
 */
export function parseEventFrame(raw: string): EventFrame {
  let event: string | undefined;
  let data: string | undefined;
  const out: EventFrame = {};
  for (const line of raw.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'retry' && /^\d+$/.test(value)) out.retryMs = Number(value);
  }
  if (event === undefined || data === undefined || !Object.hasOwn(DAEMON_EVENTS, event)) return out;
  const name = event as DaemonEventName;
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { ...out, problem: `a ${name} event was not JSON` };
  }
  const parsed = DAEMON_EVENTS[name].safeParse(json);
  if (!parsed.success) return { ...out, problem: `a ${name} event did not match its schema` };
  return { ...out, event: { event: name, data: parsed.data } as DaemonEvent };
}

/** Splits a stream of text into frames: push() chunks as they come, get back the frames they completed. */
export class EventFrameSplitter {
  private buffer = '';
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): EventFrame[] {
    this.buffer += this.decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    const frames: EventFrame[] = [];
    let at: number;
    while ((at = this.buffer.indexOf('\n\n')) >= 0) {
      frames.push(parseEventFrame(this.buffer.slice(0, at)));
      this.buffer = this.buffer.slice(at + 2);
    }
    return frames;
  }
}
