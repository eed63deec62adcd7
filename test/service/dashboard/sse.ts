// Reads a Server-Sent Events stream over real HTTP for tests: events parsed as they arrive, with
// waits on a condition (never a fixed sleep).
import { waitUntil } from '../../helpers/e2e.js';

export interface SseEvent {
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** Comment lines (`: heartbeat ...`). */
  comments: string[];
  /** Whether the server ended the stream. */
  ended(): boolean;
  /** Waits until an event matches; returns it. */
  next(what: string, match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let done = false;
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body!) {
          buf += decoder.decode(chunk as Uint8Array, { stream: true });
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
            }
            if (data.length) events.push({ event, data: data.join('\n') });
          }
        }
      } catch {
        // aborted by close()
      }
      done = true;
    })();
  } else {
    done = true;
  }
  return {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    ended: () => done,
    next: (what, match, timeoutMs = 15_000) => waitUntil(what, () => events.find(match), { timeoutMs, intervalMs: 20 }),
    close: () => ac.abort(),
  };
}
