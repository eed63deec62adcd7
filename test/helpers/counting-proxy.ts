// A real TCP proxy between a client and a server on loopback that counts the bytes each way and
// can cut a connection in the middle of a request: after a given number of bytes following an
// HTTP request line that matches a pattern, both sides are reset (the client sees ECONNRESET, the
// server a body that stops short). Tests measure what a client really sends with it, and break
// uploads the way a dropped line does.
import net from 'node:net';

export interface CutRule {
  /** Tested on each HTTP request line the client sends (`PUT /path?query HTTP/1.1`). */
  request: RegExp;
  /** Bytes the server gets from the start of the matching request line before the cut. */
  afterBytes: number;
  /** Connections to cut with this rule, then it is spent. Default 1. */
  times?: number;
  /**
   * Cut when the server's answer to the request arrives instead, none of it forwarded: the
   * server did the work, the client never hears (afterBytes is then ignored). Default false.
   */
  answer?: boolean;
}

export interface CountingProxy {
  /** `http://127.0.0.1:PORT` of the proxy. */
  origin: string;
  port: number;
  /** Where connections go; set before the first connection (a service may need the proxy's origin first). */
  target: { host: string; port: number } | undefined;
  /** Bytes forwarded from clients to the server since the start (or the last reset). */
  up(): number;
  /** Bytes forwarded from the server to clients. */
  down(): number;
  /** Request lines seen (query strings cut: they carry signatures). */
  requests(): string[];
  /** Connections cut by rules so far. */
  cuts(): number;
  /** Zeroes the byte counts and the request log. */
  reset(): void;
  /** Arms a cut rule. */
  cut(rule: CutRule): void;
  /** The link goes down: every open connection is reset, and new ones are reset at once. */
  linkDown(): void;
  /** The link is back: connections go through again. */
  linkUp(): void;
  /** Connections reset at once because the link was down. */
  refused(): number;
  close(): Promise<void>;
}

const REQUEST_LINE = /(GET|PUT|POST|DELETE|HEAD|PATCH) (\S+) HTTP\/1\.[01]\r\n/g;
/** Bytes of a connection's stream kept to find a request line split across two chunks. */
const CARRY = 2048;

export async function startCountingProxy(target?: { host: string; port: number }): Promise<CountingProxy> {
  let up = 0;
  let bytesDown = 0;
  let cuts = 0;
  let log: string[] = [];
  const rules: { request: RegExp; afterBytes: number; left: number; answer: boolean }[] = [];
  const sockets = new Set<net.Socket>();
  let linkIsDown = false;
  let refusedCount = 0;

  const server = net.createServer((client) => {
    const t = proxy.target;
    if (linkIsDown) {
      refusedCount++;
      client.resetAndDestroy();
      return;
    }
    if (!t) {
      client.destroy();
      return;
    }
    const upstream = net.connect(t.port, t.host);
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    let carry = '';
    /** Bytes still allowed through before the cut; undefined while no rule has hit this connection. */
    let budget: number | undefined;
    /** The next bytes from the server (the answer to a matched request) cut the connection. */
    let cutOnAnswer = false;

    client.on('data', (chunk: Buffer) => {
      const text = carry + chunk.toString('latin1');
      if (budget === undefined) {
        for (const m of text.matchAll(REQUEST_LINE)) {
          // Lines wholly inside the carry were seen with the previous chunk.
          if ((m.index ?? 0) + m[0].length <= carry.length) continue;
          log.push(`${m[1]} ${(m[2] ?? '').split('?')[0]}`);
          const rule = rules.find((r) => r.left > 0 && r.request.test(`${m[1]} ${m[2]} HTTP/1.1`));
          if (rule?.answer && !cutOnAnswer) {
            rule.left--;
            cutOnAnswer = true;
          } else if (rule && budget === undefined) {
            rule.left--;
            // Count from the start of the request line, which may lie in the carry.
            const startInChunk = (m.index ?? 0) - carry.length;
            budget = rule.afterBytes + startInChunk;
          }
        }
      }
      carry = text.slice(-CARRY);
      if (budget !== undefined) {
        const pass = Math.max(0, Math.min(chunk.length, budget));
        budget -= chunk.length;
        if (pass > 0) {
          up += pass;
          upstream.write(chunk.subarray(0, pass));
        }
        if (budget <= 0) {
          cuts++;
          client.resetAndDestroy();
          upstream.resetAndDestroy();
        }
        return;
      }
      up += chunk.length;
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.on('data', (chunk: Buffer) => {
      if (cutOnAnswer) {
        cuts++;
        client.resetAndDestroy();
        upstream.resetAndDestroy();
        return;
      }
      bytesDown += chunk.length;
      if (!client.write(chunk)) upstream.pause();
    });
    client.on('drain', () => upstream.resume());
    client.on('end', () => upstream.end());
    // When the server hangs up (an early 413 with Connection: close, which it may follow with a
    // reset), its answer is already written to the client: close gently and let the client's
    // remaining bytes drain, so that answer is not lost to a reset of our own.
    let closing = false;
    const closeGently = (): void => {
      if (closing) return;
      closing = true;
      client.removeAllListeners('data');
      client.on('data', () => undefined);
      client.resume();
      client.end();
    };
    upstream.on('end', closeGently);
    upstream.on('error', closeGently);
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  const proxy: CountingProxy = {
    origin: `http://127.0.0.1:${port}`,
    port,
    target,
    up: () => up,
    down: () => bytesDown,
    requests: () => [...log],
    cuts: () => cuts,
    reset() {
      up = 0;
      bytesDown = 0;
      log = [];
    },
    cut(rule) {
      rules.push({
        request: rule.request,
        afterBytes: rule.afterBytes,
        left: rule.times ?? 1,
        answer: rule.answer ?? false,
      });
    },
    linkDown() {
      linkIsDown = true;
      for (const s of sockets) s.resetAndDestroy();
    },
    linkUp() {
      linkIsDown = false;
    },
    refused: () => refusedCount,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
