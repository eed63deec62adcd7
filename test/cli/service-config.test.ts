// `renderbridge service` settings from a JSON config file, the environment and flags, with one
// precedence (flag > environment > file > default): the real command (through tsx) shows them
// in --print-config with their sources, answers with them (an upload URL's expiry, 429 on the
// 4th request of a 3-request budget, the public URL in presigned URLs), and refuses a bad file
// or value before it starts, naming the key, the file and what is allowed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';
import { startCliService } from '../helpers/cli-service.js';
import { api } from '../helpers/http.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-config-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function configFile(name: string, content: unknown): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** `key = value  (source)` lines of --print-config, by key. */
function printed(stdout: string): Map<string, { value: string; source: string }> {
  const rows = new Map<string, { value: string; source: string }>();
  for (const line of stdout.split('\n')) {
    const m = /^(\S+)\s+= (.*) {2}\((.*)\)$/.exec(line);
    if (m) rows.set(m[1]!, { value: m[2]!, source: m[3]! });
  }
  return rows;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('renderbridge service settings', () => {
  it(
    '--print-config: flag beats environment beats file beats default, each value with its source, secrets ' +
      'redacted',
    async () => {
      const file = await configFile('print.json', {
        port: 9100,
        rateLimitMax: 100,
        downloadUrlTtlSeconds: '15m',
        outputRetentionDays: 3,
        blobPartSizeBytes: '16MiB',
        databaseUrl: 'postgres://rb:hunter2@db.internal:5432/rb',
        workerToken: 'token-from-file',
        s3: { bucket: 'renders', accessKeyId: 'AKIAFILE', secretAccessKey: 'secret-from-file' },
      });
      const r = await runCli(['service', '--print-config', '--port', '9200', '--data-dir', path.join(dir, 'data')], {
        HOME: dir,
        RENDERBRIDGE_CONFIG: file,
        RENDERBRIDGE_PORT: '9300',
        RENDERBRIDGE_RATE_LIMIT: '7',
        RENDERBRIDGE_METRICS_TOKEN: 'metrics-secret',
      });
      expect(r.code, r.stderr).toBe(0);
      const rows = printed(r.stdout);
      expect(rows.get('port')).toEqual({ value: '9200', source: 'flag --port' });
      expect(rows.get('rateLimitMax')).toEqual({ value: '7', source: 'env RENDERBRIDGE_RATE_LIMIT' });
      expect(rows.get('downloadUrlTtlSeconds')).toEqual({ value: '900', source: `file ${file}` });
      expect(rows.get('outputRetentionDays')).toEqual({ value: '3', source: `file ${file}` });
      expect(rows.get('blobPartSizeBytes')).toEqual({ value: String(16 * 1024 ** 2), source: `file ${file}` });
      expect(rows.get('uploadUrlTtlSeconds')).toEqual({ value: '21600', source: 'default' });
      expect(rows.get('s3.bucket')).toEqual({ value: 'renders', source: `file ${file}` });
      expect(rows.get('databaseUrl')?.value).toBe('postgres://rb:redacted@db.internal:5432/rb');
      expect(rows.get('workerToken')).toEqual({ value: '[redacted]', source: `file ${file}` });
      expect(rows.get('metricsToken')).toEqual({ value: '[redacted]', source: 'env RENDERBRIDGE_METRICS_TOKEN' });
      expect(rows.get('s3.secretAccessKey')?.value).toBe('[redacted]');
      for (const secret of ['hunter2', 'token-from-file', 'metrics-secret', 'secret-from-file', 'AKIAFILE'])
        expect(r.stdout).not.toContain(secret);
      expect(r.stdout).toContain(`# config file: ${file}`);
    },
  );

  it('--print-config of a worker: its own settings from the file, the variable over it', async () => {
    const file = await configFile('worker.json', {
      serviceUrls: ['http://render-1.internal:8420', 'http://render-2.internal:8420'],
      workerName: 'gpu-7',
      metricsPort: 9470,
      chunkFrames: 2,
      leaseSeconds: '45s',
      rateLimitMax: 10,
    });
    const r = await runCli(['worker', '--config', file, '--print-config'], {
      HOME: dir,
      RENDERBRIDGE_WORKER_NAME: 'gpu-8',
      RENDERBRIDGE_WORKER_TOKEN: 'worker-secret',
    });
    expect(r.code, r.stderr).toBe(0);
    const rows = printed(r.stdout);
    expect(rows.get('serviceUrls')).toEqual({
      value: 'http://render-1.internal:8420, http://render-2.internal:8420',
      source: `file ${file}`,
    });
    expect(rows.get('workerName')).toEqual({ value: 'gpu-8', source: 'env RENDERBRIDGE_WORKER_NAME' });
    expect(rows.get('metricsPort')).toEqual({ value: '9470', source: `file ${file}` });
    expect(rows.get('chunkFrames')).toEqual({ value: '2', source: `file ${file}` });
    expect(rows.get('leaseSeconds')).toEqual({ value: '45', source: `file ${file}` });
    expect(rows.get('workerToken')).toEqual({ value: '[redacted]', source: 'env RENDERBRIDGE_WORKER_TOKEN' });
    // A service key in a shared file is accepted and not a worker setting.
    expect(rows.has('rateLimitMax')).toBe(false);
    expect(r.stdout).not.toContain('worker-secret');
  });

  it(
    'answers with the configured values: upload URL lifetime, public URL, rate limit',
    { timeout: 120_000 },
    async () => {
      const data = path.join(dir, 'svc');
      const port = await freePort();
      // File: rate limit 100, a 10 min upload URL, the public URL; the
      // environment lowers the rate limit to 3, the flag sets 5 min.
      const file = await configFile('svc.json', {
        port,
        rateLimitMax: 100,
        uploadUrlTtlSeconds: '10m',
        publicUrl: `http://localhost:${port}`,
        dataDir: './svc',
        workers: 0,
      });
      const created = await runCli(
        ['admin', 'create-key', '--init', '--data-dir', data, '--workspace', 'studio', '--label', 'cfg'],
        { HOME: dir },
      );
      expect(created.code, created.stderr).toBe(0);
      const key = created.stdout.trim().split('\n').at(-1)!;
      const svc = startCliService(['--upload-url-ttl', '5m'], {
        HOME: dir,
        RENDERBRIDGE_CONFIG: file,
        RENDERBRIDGE_RATE_LIMIT: '3',
      });
      try {
        // The line names the public URL from the file, and the data folder relative to the file.
        expect(await svc.ready).toBe(`http://localhost:${port}/api/external/v1`);
        expect(svc.stderr()).toContain(`data folder:  ${data} (from the config file)`);
        const call = api(`http://127.0.0.1:${port}/api/external/v1`, key);
        const before = Date.now();
        const up = await call<{ uploadUrl: string; expiresAt: string }>('POST', '/uploads', {
          fileName: 'scene.blend',
          fileType: 'blend',
        });
        expect(up.status, JSON.stringify(up.body)).toBe(201);
        // 5 minutes (the flag), not 10 (the file) nor 6 hours (the default).
        const ttl = (Date.parse(up.body.expiresAt) - before) / 1000;
        expect(ttl).toBeGreaterThan(290);
        expect(ttl).toBeLessThan(310);
        expect(up.body.uploadUrl.startsWith(`http://localhost:${port}/storage/`)).toBe(true);
        expect(Number(new URL(up.body.uploadUrl).searchParams.get('exp'))).toBe(
          Math.floor(Date.parse(up.body.expiresAt) / 1000),
        );
        // 3 requests a minute (the environment), not 100 (the file).
        expect((await call('GET', '/jobs')).status).toBe(200);
        expect((await call('GET', '/jobs')).status).toBe(200);
        const limited = await call<{ name: string }>('GET', '/jobs');
        expect(limited.status).toBe(429);
        expect(limited.body.name).toBe('RATE_LIMITED');
      } finally {
        await svc.stop();
      }
    },
  );

  // Ten CLI starts through tsx: a minute or more on a busy two-core machine.
  it(
    'refuses a bad config file before starting: exit 2, naming the file, the key and what is allowed',
    { timeout: 240_000 },
    async () => {
      const cases: [unknown, RegExp][] = [
        [{ rateLimitMax: 3, ratelimitmax: 4 }, /unknown key "ratelimitmax"; the keys are: host, port/],
        [{ s3: { bucket: 'b', acessKeyId: 'x' } }, /unknown key "s3.acessKeyId"; the keys are: s3.bucket/],
        [{ rateLimitMax: 'many' }, /key "rateLimitMax": expected a whole number from 1 up, got "many"/],
        [{ port: 70000 }, /key "port": expected a whole number from 0 to 65535, got 70000/],
        [{ blobPartSizeBytes: '2GiB' }, /key "blobPartSizeBytes": expected a size from 64KiB to 1GiB/],
        [{ logFormat: 'xml' }, /key "logFormat": expected one of auto, pretty, json/],
        [{ blobUploads: 'sometimes' }, /key "blobUploads": expected true or false/],
        ['{ "port": 1, }', /is not JSON/],
        ['[1, 2]', /must hold one JSON object of settings/],
      ];
      for (const [i, [content, message]] of cases.entries()) {
        const file = await configFile(`bad-${i}.json`, content);
        const r = await runCli(['service', '--config', file, '--print-config'], { HOME: dir });
        expect(r.code, `${JSON.stringify(content)}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).toContain(file);
        expect(r.stdout).toBe('');
      }
      const missing = await runCli(['service', '--print-config'], {
        HOME: dir,
        RENDERBRIDGE_CONFIG: path.join(dir, 'nope.json'),
      });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/cannot read the config file .*nope\.json/);
    },
  );

  it('refuses a bad variable or flag, naming it', { timeout: 120_000 }, async () => {
    const env = await runCli(['service', '--print-config'], { HOME: dir, RENDERBRIDGE_RATE_LIMIT_WINDOW: 'soon' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('RENDERBRIDGE_RATE_LIMIT_WINDOW');
    expect(env.stderr).toMatch(/a duration of at least 1000 ms/);
    const flag = await runCli(['service', '--print-config', '--download-url-ttl', '1s'], { HOME: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--download-url-ttl');
    expect(flag.stderr).toMatch(/at least 10 seconds/);
  });
});
