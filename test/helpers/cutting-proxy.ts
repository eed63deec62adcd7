// An HTTP proxy in front of the reference service (its publicUrl, so the signed storage URLs point
// here too) that passes everything through, except, while `cutting` is on, the output files it
// serves: those go out without a length (ended by closing the connection, as HTTP/1.0 proxies and
// some caches send them) and the connection closes after an eighth of the body, as a link that drops
// does. A close-delimited body cut short looks complete to the client, so only the length the server
// announces elsewhere (HEAD, Content-Range) tells. The reference service always sends the length, and
// node's client turns a body shorter than its Content-Length into a network error: no conforming path
// through it alone gives a body of another length than announced (SIZE_MISMATCH), hence this stand-in.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CuttingProxy {
  origin: string;
  /** Where requests go: `http://127.0.0.1:PORT` of the service; set before the first request. */
  target: string;
  /** Cut the GET answers of files whose path matches. Default: every .png under /storage/. */
  cutting: RegExp | null;
  /** Answers cut so far. */
  cuts: number;
  close(): Promise<void>;
}

export async function startCuttingProxy(): Promise<CuttingProxy> {
  const proxy: CuttingProxy = {
    origin: '',
    target: '',
    cutting: /^\/storage\/.*\.png$/,
    cuts: 0,
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', proxy.target);
    const headers = { ...req.headers, host: url.host };
    const upstream = http.request(url, { method: req.method, headers }, (answer) => {
      const cut = req.method === 'GET' && proxy.cutting?.test(url.pathname) && (answer.statusCode ?? 0) < 300;
      if (!cut) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        proxy.cuts++;
        const body = Buffer.concat(chunks);
        const head = Object.entries(answer.headers)
          .filter(([k]) => !['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(k))
          .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`);
        // Written on the socket itself: a body with no length, ended by closing the connection.
        const socket = res.socket!;
        const status = `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`;
        socket.write(`${[status, ...head, 'connection: close'].join('\r\n')}\r\n\r\n`);
        socket.end(body.subarray(0, Math.max(1, Math.floor(body.length / 8))));
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
