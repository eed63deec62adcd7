// A client of the daemon's `GET /events` stream (Server-Sent Events over fetch, with the token in
// the Authorization header). Each event is parsed with its DAEMON_EVENTS schema; a frame that does
// not match is reported and skipped. When the stream ends or fails it reconnects after the delay
// the daemon asked for (`retry:`), or `reconnectMs`, asking `connection()` again (a restarted
// daemon has a new port and token); `onOpen` fires at every (re)connection so the caller re-reads
// GET /jobs (the daemon does not replay missed events).
import { DAEMON_EVENTS, type DaemonEvent, type DaemonEventName } from '../../shared/daemon/api.js';

export interface DaemonConnection {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  token: string;
}

export interface DaemonEventsOptions {
  /** Where the daemon is now; null while it is not running (the client waits and asks again). */
  connection: () => DaemonConnection | null | Promise<DaemonConnection | null>;
  onEvent: (event: DaemonEvent) => void;
  /** Called at each successful (re)connection. Default: nothing. */
  onOpen?: (connection: DaemonConnection) => void;
  /** Called when a connection fails or ends, and for frames that do not match their schema. Default: nothing. */
  onProblem?: (message: string) => void;
  /** Delay before reconnecting when the daemon did not say. Default 2000 ms. */
  reconnectMs?: number;
  /** fetch implementation. Default: the global fetch. */
  fetch?: typeof fetch;
}

export class DaemonEvents {
  private controller: AbortController | null = null;
  private running = false;
  private retryMs: number;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly options: DaemonEventsOptions) {
    this.retryMs = options.reconnectMs ?? 2000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops reading and reconnecting; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.controller?.abort();
    this.wake?.();
    await this.loop;
  }

  /** Drops the current stream and reconnects now (e.g. the supervisor saw a new daemon). */
  reconnect(): void {
    this.controller?.abort();
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const conn = await Promise.resolve(this.options.connection()).catch(() => null);
      if (conn) await this.readOnce(conn);
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.retryMs);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private async readOnce(conn: DaemonConnection): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    const doFetch = this.options.fetch ?? fetch;
    try {
      const res = await doFetch(`${conn.origin}/events`, {
        headers: { authorization: `Bearer ${conn.token}`, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (res.status !== 200 || !res.body) {
        await res.body?.cancel();
        this.options.onProblem?.(`GET /events answered ${res.status}`);
        return;
      }
      this.options.onOpen?.(conn);
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          this.frame(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
        }
      }
      this.options.onProblem?.('the event stream ended');
    } catch (err) {
      if (!controller.signal.aborted) this.options.onProblem?.(`the event stream failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }

  private frame(raw: string): void {
    let event: string | undefined;
    let data: string | undefined;
    for (const line of raw.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    if (event === undefined || data === undefined) return;
    if (!(event in DAEMON_EVENTS)) return;
    const name = event as DaemonEventName;
    let parsed;
    try {
      parsed = DAEMON_EVENTS[name].safeParse(JSON.parse(data));
    } catch {
      this.options.onProblem?.(`a ${name} event was not JSON`);
      return;
    }
    if (!parsed.success) {
      this.options.onProblem?.(`a ${name} event did not match its schema`);
      return;
    }
    this.options.onEvent({ event: name, data: parsed.data } as DaemonEvent);
  }
}
