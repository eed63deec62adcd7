// A small render service that keeps to the spec (../shared/spec/render-job-service-api.md) and
// nothing more: no extensions (GET /extensions answers 404), single-PUT uploads, jobs moved
// created -> validating -> validated -> rendering -> failed. Its failed jobs carry no failedReason,
// which the spec allows ("`failedReason` filled when available"): a farm whose worker vanished, or
// one that has no client-facing words for a failure. The reference service always fills it, so no
// test through it can end a submission with JOB_FAILED; this stand-in exists for that one path.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReasonlessFarm {
  baseUrl: string;
  apiKey: string;
  /** Jobs by id, as GET /jobs/{id} answers them. */
  jobs: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

const PREFIX = '/api/external/v1';

export async function startReasonlessFarm(): Promise<ReasonlessFarm> {
  const apiKey = `rb_live_${randomUUID().replace(/-/g, '')}`;
  const workspaceId = randomUUID();
  const userId = randomUUID();
  const uploads = new Map<string, boolean>();
  const jobs = new Map<string, Record<string, unknown>>();
  let origin = '';

  // The farm's own work goes on in the background, as a real one's does.
  const later = (fn: () => void) => setTimeout(fn, 50).unref();
  const move = (job: Record<string, unknown>, status: string, extra: Record<string, unknown> = {}) =>
    Object.assign(job, { status, updatedAt: new Date().toISOString(), ...extra });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://farm');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const fail = (status: number, name: string, message: string) =>
      send(status, { name, message, details: [], type: 'api', metadata: {} });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const put = /^\/put\/([\w-]+)$/.exec(url.pathname);
      if (req.method === 'PUT' && put && uploads.has(put[1]!)) {
        uploads.set(put[1]!, true);
        return send(200, {});
      }
      if (req.headers.authorization !== `Bearer ${apiKey}`) return fail(401, 'UNAUTHORIZED', 'Send the API key.');
      const p = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname;
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : {};
      const m = /^\/jobs\/([\w-]+)(\/\w+)?$/.exec(p);
      const job = m ? jobs.get(m[1]!) : undefined;
      if (req.method === 'POST' && p === '/uploads') {
        const slug = randomUUID();
        uploads.set(slug, false);
        const expiresAt = new Date(Date.now() + 3600_000).toISOString();
        return send(201, { uploadUrl: `${origin}/put/${slug}`, slug, expiresAt });
      }
      if (req.method === 'POST' && p === '/jobs') {
        if (uploads.get(String(body['slug'])) !== true) return fail(400, 'UPLOAD_NOT_FOUND', 'Upload first.');
        const now = new Date().toISOString();
        const created = { id: randomUUID(), status: 'created', userId, workspaceId, createdAt: now, updatedAt: now };
        jobs.set(created.id, created);
        return send(201, created);
      }
      if (req.method === 'GET' && p === '/jobs') {
        const all = [...jobs.values()].reverse();
        return send(200, { jobs: all, pagination: { page: 1, pageSize: 20, total: all.length, totalPages: 1 } });
      }
      if (req.method === 'GET' && p === '/jobs/progress') return send(200, { data: [] });
      if (!job) return fail(404, 'JOB_NOT_FOUND', 'No such job.');
      if (req.method === 'GET' && !m![2]) return send(200, { data: job });
      if (req.method === 'GET' && m![2] === '/progress') {
        const none = { framesTotal: null, framesDone: null, framesRendering: null, framesFailed: null };
        const counters = { ...none, currentFrame: null, currentSample: null, samplesTotal: null, percent: null };
        return send(200, {
          data: { jobId: job.id, status: job.status, ...counters, etaSeconds: null, updatedAt: null },
        });
      }
      if (req.method === 'POST' && m![2] === '/validate') {
        if (job.status !== 'created') return fail(400, 'VALIDATE_NOT_ALLOWED', 'Only a created job validates.');
        move(job, 'validating');
        later(() => move(job, 'validated'));
        return send(202, job);
      }
      if (req.method === 'POST' && m![2] === '/render') {
        if (job.status !== 'validated') return fail(400, 'RENDER_NOT_ALLOWED', 'Validate first.');
        move(job, 'rendering');
        // The render fails, and this farm has nothing to say about why.
        later(() => move(job, 'failed', { failedReason: null }));
        return send(202, job);
      }
      return fail(404, 'NOT_FOUND', 'No such route.');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${origin}${PREFIX}`,
    apiKey,
    jobs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
