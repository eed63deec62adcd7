// A scripted node:http server on 127.0.0.1 for client tests: real sockets and real HTTP, with
// the answers chosen by each test. Not a *.test.ts file, so vitest does not collect it.
import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Job } from '../../../shared/api/job.js';
import { API_PREFIX } from '../../../shared/constants.js';
import type { JobStatus } from '../../../shared/job-status.js';

export interface SeenRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Milliseconds since the server started. */
  readonly at: number;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer, index: number) => void | Promise<void>;

export interface TestServer {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  readonly origin: string;
  /** `origin` + the API prefix: a valid client baseUrl. */
  readonly baseUrl: string;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a server whose every request goes to `handler`, after its body has been read. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const started = Date.now();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const index = requests.length;
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: body.toString('utf8'),
        at: Date.now() - started,
      });
      Promise.resolve(handler(req, res, body, index)).catch((err: unknown) => {
        res.statusCode = 599;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    baseUrl: origin + API_PREFIX,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/** A spec error body, as the service sends it. */
export function errorBody(
  name: string,
  message: string,
  details: { code: string; path: string[]; message: string }[] = [],
) {
  return { message, name, details, type: details.length > 0 ? 'zod' : 'api', metadata: { requestId: 'req-1' } };
}

/** A job that satisfies the Job schema. */
export function makeJob(status: JobStatus, extra: Partial<Job> = {}): Job {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    status,
    userId: randomUUID(),
    workspaceId: randomUUID(),
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
}
