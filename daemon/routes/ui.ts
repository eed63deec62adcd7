// The job window: a static page at /ui/ (HTML, JS, CSS from daemon/ui/, no build step) that lists
// the jobs and the packs and uploads in progress, and follows them live. The files hold no data, so they are served
// without the token (the guard lets GET/HEAD under UI_PREFIX through, still checking Origin and Host); the page reads
// the token from its URL fragment (`/ui/#token=...`, never sent to the server) and calls the API
// with `Authorization: Bearer`. A strict CSP allows scripts, styles and API calls from the daemon
// only, and images from the daemon and the service (preview thumbnails are presigned URLs).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

export const UI_PREFIX = '/ui';

export interface UiRouteDeps {
  /** The service API root; its origin is allowed as an image source (preview thumbnails). */
  serviceUrl: string;
  /** Folder of index.html, app.js, its helper scripts and app.css. Default: daemon/ui next to this module's folder. */
  dir?: string;
}

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'transfer.js': 'text/javascript; charset=utf-8',
  'estimate.js': 'text/javascript; charset=utf-8',
  'flipbook.js': 'text/javascript; charset=utf-8',
  'frames.js': 'text/javascript; charset=utf-8',
  'scheduling.js': 'text/javascript; charset=utf-8',
  'job-row.js': 'text/javascript; charset=utf-8',
  'sending.js': 'text/javascript; charset=utf-8',
  'events.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;

/** The page's Content-Security-Policy: nothing inline, nothing from elsewhere but preview images. */
export function uiContentSecurityPolicy(serviceUrl: string): string {
  let service = '';
  try {
    service = ` ${new URL(serviceUrl).origin}`;
  } catch {
    // A config without a valid URL only loses previews.
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    // blob: the frame thumbnails, fetched through the daemon with the token.
    `img-src 'self' blob:${service} https:`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const uiRoutes: FastifyPluginAsync<UiRouteDeps> = async (app, deps) => {
  const dir = deps.dir ?? fileURLToPath(new URL('../ui/', import.meta.url));
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of Object.entries(FILES))
    files.set(name, { body: await readFile(path.join(dir, name)), type });
  const csp = uiContentSecurityPolicy(deps.serviceUrl);

  app.get(UI_PREFIX, async (_req, reply) => reply.redirect(`${UI_PREFIX}/`, 302));
  const serve = async (name: string, reply: FastifyReply) => {
    const file = files.get(name);
    if (!file) return reply.callNotFound();
    return reply
      .header('content-type', file.type)
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin')
      .send(file.body);
  };
  app.get(`${UI_PREFIX}/`, async (_req, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>(`${UI_PREFIX}/:file`, async (req, reply) => serve(req.params.file, reply));
};
