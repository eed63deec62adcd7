// The daemon's event fan-out: in-process listeners (CLI progress bars) and Server-Sent Events
// streams (`GET /events`: the Blender add-on, the tray). Each event is framed once as
//
//   id: <n>
//   event: <name of DAEMON_EVENTS>
//   data: <one line of JSON>
//
// and written to every stream. A stream whose unsent bytes pass `maxBufferedBytes` is dropped (its
// client reconnects and re-reads GET /jobs), so a slow client never holds the others back. A comment
// line every `heartbeatMs` keeps idle streams visibly alive. `Last-Event-ID` is not replayed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { EventSink } from '../ports.js';

export interface EventBusLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface EventBusOptions {
  /** Interval of the `: heartbeat` comment sent to every stream. Default 15000 ms. */
  heartbeatMs?: number;
  /** Unsent bytes a stream may queue before it is dropped. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Reconnect delay suggested to clients with `retry:`. Default 2000 ms. */
  retryMs?: number;
  /** Default: none. */
  logger?: EventBusLogger;
}

export type EventListener = (event: DaemonEvent) => void;

interface Stream {
  id: number;
  res: ServerResponse;
}

export class EventBus implements EventSink {
  private readonly heartbeatMs: number;
  private readonly maxBufferedBytes: number;
  private readonly retryMs: number;
  private readonly logger: EventBusLogger | undefined;
  private readonly streams = new Set<Stream>();
  private readonly listeners = new Set<EventListener>();
  private heartbeat: NodeJS.Timeout | undefined;
  private nextEventId = 1;
  private nextStreamId = 1;
  private dropped = 0;
  private closed = false;

  constructor(options: EventBusOptions = {}) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.retryMs = options.retryMs ?? 2000;
    this.logger = options.logger;
  }

  /** Open SSE streams. */
  get streamCount(): number {
    return this.streams.size;
  }

  /** SSE streams dropped for falling behind, since start. */
  get droppedCount(): number {
    return this.dropped;
  }

  publish(event: DaemonEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger?.warn({ err, event: event.event }, 'event listener failed');
      }
    }
    if (this.streams.size === 0) return;
    const frame = `id: ${this.nextEventId++}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
    for (const stream of this.streams) this.write(stream, frame);
  }

  /** Calls `listener` with every event published from now on; returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Turns `res` into an SSE stream of every event published from now on, until the client goes
   * away or the bus closes. The caller must have taken the response over (fastify: reply.hijack()).
   */
  attach(req: IncomingMessage, res: ServerResponse): void {
    if (this.closed) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('shutting down');
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Tells reverse proxies (nginx) not to buffer the stream.
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    const stream: Stream = { id: this.nextStreamId++, res };
    this.streams.add(stream);
    const remove = (): void => {
      if (this.streams.delete(stream))
        this.logger?.info({ stream: stream.id, streams: this.streams.size }, 'event stream closed');
      this.updateHeartbeat();
    };
    req.on('close', remove);
    res.on('close', remove);
    res.on('error', remove);
    this.write(stream, `retry: ${this.retryMs}\n: connected\n\n`);
    this.logger?.info({ stream: stream.id, streams: this.streams.size }, 'event stream opened');
    this.updateHeartbeat();
  }

  /** Ends every SSE stream and refuses new ones (daemon shutdown). Listeners stay. */
  close(): void {
    this.closed = true;
    for (const stream of this.streams) stream.res.end();
    this.streams.clear();
    this.updateHeartbeat();
  }

  private write(stream: Stream, frame: string): void {
    const { res } = stream;
    if (res.destroyed || res.writableEnded) {
      this.streams.delete(stream);
      return;
    }
    res.write(frame);
    if (res.writableLength > this.maxBufferedBytes) {
      this.streams.delete(stream);
      this.dropped++;
      this.logger?.warn(
        { stream: stream.id, bufferedBytes: res.writableLength },
        'event stream dropped: the client reads too slowly',
      );
      res.destroy();
      this.updateHeartbeat();
    }
  }

  private updateHeartbeat(): void {
    if (this.streams.size > 0 && !this.heartbeat) {
      this.heartbeat = setInterval(() => {
        for (const stream of this.streams) this.write(stream, ': heartbeat\n\n');
      }, this.heartbeatMs);
      this.heartbeat.unref();
    } else if (this.streams.size === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }
}
