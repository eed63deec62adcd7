// A TCP proxy that delays every byte by a fixed time in each direction: the kernels here have no
// netem, so a benchmark's round-trip time is made in user space. What it can and cannot model:
// - every request/response exchange pays delayMs each way, as on a long link;
// - a new connection pays one extra round trip before its first bytes go on (the SYN/SYN-ACK a
//   real link would delay; the proxy's own accept happens at the link's speed);
// - TCP's own acknowledgements are not delayed (the kernel sends them), so a bulk transfer is not
//   slowed by the window/RTT product; on a 200 Mbit/s, 20 ms link that product (500 KB) is within
//   Linux's default windows anyway, so the bulk rate stays the shaped one.
// It counts bytes each way, logs every HTTP request it forwards with its timing and size (query
// strings cut: they carry signatures) and can reset every open connection at once (a dropped link).
import net from 'node:net';

export interface DelayProxyOptions {
  /** Delay added to each direction, ms. */
  delayMs: number;
  /** Bytes waiting in one direction's delay line before the sender is paused. Default 4 MiB. */
  maxQueued?: number;
  /** Follow HTTP/1.1 requests and answers for the request log. Default false. */
  logRequests?: boolean;
}

export interface RequestLogEntry {
  /** Connection number, in accept order. */
  conn: number;
  method: string;
  /** Without the query string. */
  path: string;
  /**
   * Times are epoch ms (performance.timeOrigin + performance.now(): comparable between processes), as
   * the proxy saw the bytes arrive.
   */
  at: number;
  /** The request's last byte (headers and body) from the client. */
  lastUpAt: number;
  /** Request bytes, headers and body. */
  bytesUp: number;
  /** First byte of the answer from the target; null until it answered. */
  responseAt: number | null;
  status: number | null;
  bytesDown: number;
}

export interface DelayProxy {
  /** Bytes from clients to the target (artist to farm) and back. */
  counts(): { up: number; down: number; connections: number; open: number };
  requests(): RequestLogEntry[];
  /** Destroys every open connection (both sides): clients see a reset at their next packet. */
  resetAll(): number;
  close(): Promise<void>;
}

interface Queued {
  due: number;
  chunk: Buffer;
}

/** Forwards `from` to `to` with `delayMs` added, pausing `from` while too much waits. */
function delayLine(
  from: net.Socket,
  to: net.Socket,
  delayMs: number,
  extraFirst: number,
  maxQueued: number,
  onChunk: (c: Buffer) => void,
): void {
  const queue: Queued[] = [];
  let queued = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  let first = true;
  // Room in the delay line and in the receiver's socket buffer: otherwise a slow target would let
  // the proxy's memory grow without bound.
  const full = (): boolean => queued >= maxQueued || to.writableLength >= maxQueued;
  const resumeIfRoom = (): void => {
    if (from.isPaused() && queued < maxQueued / 2 && to.writableLength < maxQueued / 2) from.resume();
  };
  const flush = (): void => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.due <= now) {
      const { chunk } = queue.shift()!;
      queued -= chunk.length;
      if (!to.destroyed) to.write(chunk);
    }
    if (full()) from.pause();
    if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0]!.due - now));
    else if (ended && !to.destroyed) to.end();
    resumeIfRoom();
  };
  from.on('data', (chunk: Buffer) => {
    onChunk(chunk);
    const due = performance.now() + delayMs + (first ? extraFirst : 0);
    first = false;
    queue.push({ due, chunk });
    queued += chunk.length;
    if (full()) from.pause();
    timer ??= setTimeout(flush, Math.max(0, queue[0]!.due - performance.now()));
  });
  // The delay line also obeys the receiver: a slow target pauses the sender through it.
  to.on('drain', resumeIfRoom);
  from.once('end', () => {
    ended = true;
    if (queue.length === 0 && !to.destroyed) to.end();
  });
}

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+) HTTP\/1\.[01]\r\n/;
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3}) /;
const now = (): number => performance.timeOrigin + performance.now();

/**
 * Follows the HTTP/1.1 exchanges of one connection from its chunks: a chunk that starts with a
 * request line starts a request, one that starts with a status line answers the oldest request
 * still unanswered. A heuristic (a body chunk could start like a request line), good enough for
 * timing a client's requests; bodies here are JSON or random bytes.
 */
function httpFollower(conn: number, log: RequestLogEntry[]): { up(c: Buffer): void; down(c: Buffer): void } {
  const mine: RequestLogEntry[] = [];
  let answered = 0;
  return {
    up(c) {
      const m = REQUEST_LINE.exec(c.subarray(0, 2048).toString('latin1'));
      const t = now();
      if (m) {
        const entry: RequestLogEntry = {
          conn,
          method: m[1]!,
          path: m[2]!.split('?')[0]!,
          at: t,
          lastUpAt: t,
          bytesUp: 0,
          responseAt: null,
          status: null,
          bytesDown: 0,
        };
        mine.push(entry);
        log.push(entry);
      }
      const current = mine.at(-1);
      if (current) {
        current.bytesUp += c.length;
        current.lastUpAt = t;
      }
    },
    down(c) {
      const m = STATUS_LINE.exec(c.subarray(0, 32).toString('latin1'));
      if (m && answered < mine.length) {
        const entry = mine[answered++]!;
        entry.responseAt = now();
        entry.status = Number(m[1]);
      }
      const last = mine[answered - 1];
      if (last) last.bytesDown += c.length;
    },
  };
}

/** Listens on host:port and forwards each connection to target; resolves once listening. */
export async function startDelayProxy(
  listen: { host: string; port: number },
  target: { host: string; port: number },
  opts: DelayProxyOptions,
): Promise<DelayProxy> {
  const maxQueued = opts.maxQueued ?? 4 * 1024 * 1024;
  const open = new Set<net.Socket>();
  const log: RequestLogEntry[] = [];
  let up = 0;
  let down = 0;
  let connections = 0;
  const server = net.createServer((client) => {
    const conn = ++connections;
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      open.add(s);
      s.once('close', () => open.delete(s));
    }
    // One side failing or closing abruptly takes the other with it, as a broken path would.
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', (hadError) => hadError && upstream.destroy());
    upstream.once('close', (hadError) => hadError && client.destroy());
    const http = opts.logRequests ? httpFollower(conn, log) : undefined;
    delayLine(client, upstream, opts.delayMs, 2 * opts.delayMs, maxQueued, (c) => {
      up += c.length;
      http?.up(c);
    });
    delayLine(upstream, client, opts.delayMs, 0, maxQueued, (c) => {
      down += c.length;
      http?.down(c);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  return {
    counts: () => ({ up, down, connections, open: Math.ceil(open.size / 2) }),
    requests: () => [...log],
    resetAll() {
      const n = open.size;
      for (const s of open) s.resetAndDestroy();
      return Math.ceil(n / 2);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
