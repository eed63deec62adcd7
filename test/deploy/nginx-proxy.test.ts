// deploy/nginx/renderbridge.conf in front of the real service, in Debian's nginx: a 1 GiB upload
// goes through to the service while it is being sent (never spooled to nginx's disk), is stored
// whole, and the job is created through the proxy. The test serves the config over plain HTTP on
// a free port (the listen and certificate lines are swapped; every proxy directive is the file's).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile, open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { startTestService, type TestService } from '../helpers/service.js';

const SIZE = 1024 ** 3;
let work: string;
let svc: TestService;
let nginx: ChildProcess;
let origin: string;
let nginxLog = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The deploy file with plain HTTP on `port` and the service's address as upstream. */
async function testConfig(port: number, upstream: string, prefix: string): Promise<string> {
  const text = await readFile('deploy/nginx/renderbridge.conf', 'utf8');
  const server = text
    .replace(/^\s*listen 443 ssl;$/m, `    listen 127.0.0.1:${port};`)
    .replace(/^\s*listen \[::\]:443 ssl;$/m, '')
    .replace(/^\s*ssl_certificate(_key)?\s.*$/gm, '')
    .replace(/server 127\.0\.0\.1:8420;/, `server ${upstream};`);
  // Port 443 as a listen port, not a random port that contains the digits (42443).
  expect(server).not.toMatch(/[\s:]443[\s;]|ssl_/);
  return [
    'worker_processes 1;',
    `error_log ${prefix}/error.log warn;`,
    `pid ${prefix}/nginx.pid;`,
    'events { worker_connections 64; }',
    'http {',
    `  access_log ${prefix}/access.log;`,
    `  client_body_temp_path ${prefix}/client_body;`,
    `  proxy_temp_path ${prefix}/proxy;`,
    `  fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;`,
    server,
    '}',
  ].join('\n');
}

async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (nginx.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not come up: ${nginxLog}`);
    await new Promise((r) => setImmediate(r));
  }
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-nginx-'));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  svc = await startTestService({ publicUrl: origin });
  const prefix = path.join(work, 'nginx');
  await mkdir(prefix, { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  await writeFile(conf, await testConfig(port, new URL(svc.origin).host, prefix));
  nginx = spawn('nginx', ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  nginx.stderr!.on('data', (d: Buffer) => (nginxLog += d.toString()));
  await waitForPort(port);
}, 60_000);

afterAll(async () => {
  nginx?.kill('SIGTERM');
  await svc?.close();
  await rm(work, { recursive: true, force: true });
});

it('streams a 1 GiB upload through nginx to the service, which stores it whole', async () => {
  // A sparse file: 1 GiB of zeros read from the page cache, without filling the disk twice.
  const file = path.join(work, 'big.blend');
  const fh = await open(file, 'w');
  await fh.truncate(SIZE);
  await fh.close();
  const zeros = Buffer.alloc(1024 * 1024);
  const h = createHash('sha256');
  for (let i = 0; i < SIZE / zeros.length; i++) h.update(zeros);
  const sha256 = h.digest('hex');

  const client = new RenderJobClient({ baseUrl: `${origin}/api/external/v1`, apiKey: svc.apiKey });
  const spool = path.join(work, 'nginx', 'client_body');
  let spooled = 0;
  let uploading = true;
  // With request buffering on, nginx would hold the whole body in client_body/ before passing it on.
  const watch = (async () => {
    while (uploading) {
      spooled = Math.max(spooled, (await readdir(spool).catch(() => [])).length);
      await new Promise((r) => setImmediate(r));
    }
  })();
  let sent = 0;
  const target = await client
    .uploadProject(file, { fileType: 'blend', onProgress: (s) => (sent = s) })
    .finally(() => (uploading = false));
  await watch;
  expect(sent).toBe(SIZE);
  expect(spooled).toBe(0);
  expect(new URL(target.uploadUrl).origin).toBe(origin);

  const job = await client.createJob({ slug: target.slug });
  expect(job.status).toBe('created');
  const upload = await svc.service.ports.jobs.getUpload(svc.workspaceId, target.slug);
  expect(upload).toMatchObject({ size: SIZE, sha256 });
}, 600_000);
