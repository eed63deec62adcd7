// A small real HTTP server that plays the service for download tests whose answers the reference
// service never gives: hostile output names, expired URLs, transfers cut short. It answers
// GET /jobs/{id} (a completed job), GET /jobs/{id}/downloads (a crafted body) and serves
// /files/<name> with Range and HEAD, recording every request it saw.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DownloadOutput, Downloads } from '../../shared/api/downloads.js';

export interface SeenRequest {
  method: string;
  path: string;
  range: string | undefined;
}

export interface ServedFile {
  bytes: Buffer;
  /** Send only this many bytes of each answer, then cut the connection. */
  cutAfter?: number;
  /** Answer 403 URL_EXPIRED to URLs with this `v` query value. */
  expiredVersion?: string;
}

export interface CraftedServer {
  baseUrl: string;
  origin: string;
  jobId: string;
  seen: SeenRequest[];
  /** Files served under /files/<key>. */
  files: Map<string, ServedFile>;
  /** Builds the downloads answer each time it is asked (`version` counts the asks from 1). */
  downloads: (version: number, fileUrl: (key: string) => string) => Downloads;
  close(): Promise<void>;
}

export function frameEntry(url: string, name: string, relativePath?: string): DownloadOutput {
  return {
    url,
    fileName: name,
    ...(relativePath !== undefined ? { relativePath } : {}),
    view: null,
    outputType: relativePath ? 'composite' : 'frame',
    legacy: false,
  };
}

export function answerWith(frames: DownloadOutput[], composites: DownloadOutput[] = []): Downloads {
  return {
    frames: frames.map((f) => f.url),
    compositeNodes: composites.map((c) => c.url),
    frameOutputs: frames,
    compositeNodeOutputs: composites,
    transforms: { framesZip: null, compositeNodesZip: null, video: {} },
  };
}

export async function startCraftedServer(): Promise<CraftedServer> {
  const jobId = randomUUID();
  const seen: SeenRequest[] = [];
  const files = new Map<string, ServedFile>();
  let asks = 0;
  const now = new Date().toISOString();
  const job = {
    id: jobId,
    status: 'completed',
    userId: randomUUID(),
    workspaceId: randomUUID(),
    createdAt: now,
    updatedAt: now,
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ method: req.method ?? '', path: url.pathname, range: req.headers.range });
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === `/api/external/v1/jobs/${jobId}`) return json(200, { data: job });
    if (url.pathname === `/api/external/v1/jobs/${jobId}/downloads`) {
      asks++;
      return json(
        200,
        crafted.downloads(
          asks,
          (key) => `${crafted.origin}/files/${encodeURIComponent(key)}?v=${asks}&sig=secret-signature`,
        ),
      );
    }
    const file = url.pathname.startsWith('/files/')
      ? files.get(decodeURIComponent(url.pathname.slice('/files/'.length)))
      : undefined;
    if (!file)
      return json(404, { message: 'no such file', name: 'OBJECT_NOT_FOUND', details: [], type: 'api', metadata: {} });
    if (file.expiredVersion !== undefined && url.searchParams.get('v') === file.expiredVersion) {
      return json(403, {
        message: 'The signed URL has expired',
        name: 'URL_EXPIRED',
        details: [],
        type: 'api',
        metadata: {},
      });
    }
    const size = file.bytes.length;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    if (m && start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` });
      return res.end();
    }
    const body = file.bytes.subarray(start);
    const headers: Record<string, string> = { 'content-length': String(body.length), 'accept-ranges': 'bytes' };
    if (m) headers['content-range'] = `bytes ${start}-${size - 1}/${size}`;
    res.writeHead(m ? 206 : 200, headers);
    if (req.method === 'HEAD') return res.end();
    if (file.cutAfter !== undefined && file.cutAfter < body.length) {
      res.write(body.subarray(0, file.cutAfter), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const crafted: CraftedServer = {
    baseUrl: `${origin}/api/external/v1`,
    origin,
    jobId,
    seen,
    files,
    downloads: () => answerWith([]),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return crafted;
}
