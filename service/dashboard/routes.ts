// The farm dashboard (public/, plain ES modules, no build step) at `/` and the API reference at
// `/docs` (swagger-ui from the service's own node_modules), both under a strict Content Security
// Policy: scripts, styles and API calls from this origin only, nothing inline, never framed.
// The files hold no data, so they are served without authentication; the page signs in through
// POST /sessions.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

export interface DashboardDeps {
  /** Origins preview images may come from besides this one (the public URL, an S3 endpoint). */
  imageOrigins: readonly string[];
  /** Folder of the page's files. Default: public/ beside this module. */
  dir?: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

const APP_FILES = [
  'app.js',
  'api.js',
  'live.js',
  'format.js',
  'advice.js',
  'jobs-view.js',
  'job-view.js',
  'workers-view.js',
  'requeue.js',
  'scheduling.js',
  'job-action.js',
  'queue-ahead-view.js',
  'share-view.js',
  'log-view.js',
  'frames-view.js',
  'estimate-view.js',
  'estimate-figures.js',
  'thumbs-view.js',
  'app.css',
];
/** The frame chart's library (uPlot), served from the service's own node_modules like swagger-ui: no CDN. */
const CHART_FILES = ['uPlot.esm.js', 'uPlot.min.css'];

/** The policy of every page and file served here; `extraImg` adds image sources. */
export function dashboardContentSecurityPolicy(
  imageOrigins: readonly string[],
  extraImg: readonly string[] = [],
): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    ['img-src', "'self'", ...imageOrigins, ...extraImg].join(' '),
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The origin of a URL, or nothing for one that does not parse. */
export function originOf(url: string | undefined): string[] {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
}

async function load(dir: string, names: readonly string[]): Promise<Map<string, { body: Buffer; type: string }>> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of names)
    files.set(name, {
      body: await readFile(path.join(dir, name)),
      type: TYPES[path.extname(name)] ?? 'application/octet-stream',
    });
  return files;
}

export const dashboardRoutes: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  const dir = deps.dir ?? fileURLToPath(new URL('./public/', import.meta.url));
  const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const page = await load(dir, ['index.html']);
  const chartDir = path.join(path.dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
  const assets = new Map([...(await load(dir, APP_FILES)), ...(await load(chartDir, CHART_FILES))]);
  const docs = new Map([
    ...(await load(dir, ['docs.html', 'docs.js'])),
    ...(await load(swaggerDir, ['swagger-ui-bundle.js', 'swagger-ui.css'])),
  ]);
  const csp = dashboardContentSecurityPolicy(deps.imageOrigins);
  // swagger-ui's stylesheet draws its icons as data: SVGs.
  const docsCsp = dashboardContentSecurityPolicy(deps.imageOrigins, ['data:']);

  const send = (reply: FastifyReply, file: { body: Buffer; type: string } | undefined, policy: string) => {
    if (!file) return reply.callNotFound();
    return (
      reply
        .header('content-type', file.type)
        .header('content-security-policy', policy)
        .header('x-content-type-options', 'nosniff')
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'no-referrer')
        .header('cross-origin-opener-policy', 'same-origin')
        // Files change with the package: check each time (ETag-less, they are small or cached by the proxy).
        .header('cache-control', 'no-cache')
        .send(file.body)
    );
  };
  app.get('/', async (_req, reply) => send(reply, page.get('index.html'), csp));
  // Browsers ask for it on their own; there is none, and a 404 would fill the console.
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).send());
  app.get<{ Params: { file: string } }>('/assets/:file', async (req, reply) =>
    send(reply, assets.get(req.params.file), csp),
  );
  app.get('/docs', async (_req, reply) => send(reply, docs.get('docs.html'), docsCsp));
  app.get<{ Params: { file: string } }>('/docs/:file', async (req, reply) =>
    send(reply, req.params.file === 'docs.html' ? undefined : docs.get(req.params.file), docsCsp),
  );
};
