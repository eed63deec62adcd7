// A long-lived HTTP answer (an event stream, a log follow) read as it arrives, for tests. It uses
// node:http on a connection of its own (agent: false), not fetch: aborting a fetch leaves undici's
// pool holding a fresh idle connection that keeps the server from closing for a minute, and
// stream tests open and drop many.
import { request } from 'node:http';

export interface OpenStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as JSON, for a refused stream (the error body). */
  json(): Promise<unknown>;
  /** What arrived so far. */
  text(): string;
  /** Whether the server ended the answer. */
  ended(): boolean;
  close(): void;
}

export function openStream(url: string, headers: Record<string, string>, timeoutMs = 10_000): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers });
    const timer = setTimeout(() => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)), timeoutMs);
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.once('response', (res) => {
      clearTimeout(timer);
      let text = '';
      let ended = false;
      let done: () => void = () => undefined;
      const finished = new Promise<void>((r) => (done = r));
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.once('end', () => ((ended = true), done()));
      res.once('close', () => ((ended = true), done()));
      res.once('error', () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        json: async () => {
          await finished;
          return JSON.parse(text) as unknown;
        },
        text: () => text,
        ended: () => ended,
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}
