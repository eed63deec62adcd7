// A client of the daemon's `GET /events` stream, opened with the typed DaemonClient (token in the
// Authorization header) and read with the contract's frame parser (shared/daemon/client-events.ts):
// each event is parsed with its DAEMON_EVENTS schema; a frame that does not match is reported and
// skipped. When the stream ends or fails it reconnects after the delay the daemon asked for
// (`retry:`), or `reconnectMs`, asking `connection()` again (a restarted daemon has a new port and
// token); `onOpen` fires at every (re)connection so the caller re-reads GET /jobs (the daemon does
// not replay missed events).
import type { DaemonEvent } from '../../shared/daemon/api.js';
import { DaemonClient, DaemonClientError } from '../../shared/daemon/client.js';
import { EventFrameSplitter } from '../../shared/daemon/client-events.js';

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
    const client = new DaemonClient({
      origin: conn.origin,
      token: conn.token,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
    });
    try {
      let res: Response;
      try {
        res = await client.openEvents(controller.signal);
      } catch (err) {
        if (!(err instanceof DaemonClientError) || err.status === 0) throw err;
        this.options.onProblem?.(`GET /events answered ${err.status}`);
        return;
      }
      this.options.onOpen?.(conn);
      const splitter = new EventFrameSplitter();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const frame of splitter.push(chunk)) {
          if (frame.retryMs !== undefined) this.retryMs = frame.retryMs;
          if (frame.problem) this.options.onProblem?.(frame.problem);
          if (frame.event) this.options.onEvent(frame.event);
        }
      }
      this.options.onProblem?.('the event stream ended');
    } catch (err) {
      if (!controller.signal.aborted)
        this.options.onProblem?.(`the event stream failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }
}
