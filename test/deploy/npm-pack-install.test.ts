// The package as a studio installs it: `npm pack` of this checkout, `npm install -g` of the
// tarball into an empty prefix (dependencies from the registry or npm's cache, native modules
// built there), then `renderbridge service` from that prefix answers the API with a key made by
// `renderbridge admin` from the same prefix. Nothing of the checkout is on the path.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
let work: string;
let prefix: string;
let tarball: string;
let service: ChildProcess | undefined;

/** A PATH with node but without this checkout's node_modules/.bin. */
const PATH = [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-pack-'));
  prefix = path.join(work, 'prefix');
  // dist/ is built by setup before the tests; --ignore-scripts packs it as it is.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
    maxBuffer: 64 << 20,
  });
  const info = (JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
  tarball = path.join(work, info.filename);
  const files = info.files.map((f) => f.path);
  // What running needs is in it; the sources and tests are not.
  expect(files).toContain('bin/renderbridge.js');
  expect(files).toContain('dist/cli/index.js');
  expect(files).toContain('dist/blender/render/render_setup.py');
  expect(files).toContain('dist/blender/analysis/analyze.py');
  expect(files.some((f) => f.startsWith('test/') || f.startsWith('service/') || f.endsWith('.test.js'))).toBe(false);
  await run(
    'npm',
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball],
    {
      env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' },
      maxBuffer: 64 << 20,
    },
  );
}, 900_000);

afterAll(async () => {
  service?.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
});

it('runs `renderbridge service` from the installed package, which answers with a key its admin made', async () => {
  const bin = path.join(prefix, 'bin', 'renderbridge');
  const env = { PATH, HOME: work };
  const version = await run(bin, ['--version'], { env });
  expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);

  const dataDir = path.join(work, 'data');
  service = spawn(bin, ['service', '--port', '0', '--workers', '0', '--data-dir', dataDir], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: work,
  });
  let out = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d.toString();
      const m = /API base URL: (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    service!.stdout!.on('data', seen);
    service!.stderr!.on('data', seen);
    service!.once('exit', (code) => reject(new Error(`renderbridge service exited with ${code}:\n${out}`)));
  });
  expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/external\/v1$/);

  const made = await run(
    bin,
    ['admin', 'create-key', '--data-dir', dataDir, '--workspace', 'studio', '--label', 'pack test'],
    { env },
  );
  const key = made.stdout.trim().split('\n').at(-1)!;
  expect(key).toMatch(/^rb_live_/);
  const jobs = await fetch(`${baseUrl}/jobs`, { headers: { authorization: `Bearer ${key}` } });
  expect(jobs.status).toBe(200);
  expect(await jobs.json()).toMatchObject({ jobs: [], pagination: { total: 0 } });
  const upload = await fetch(`${baseUrl}/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ fileName: 'shot.blend', fileType: 'blend' }),
  });
  expect(upload.status).toBe(201);
}, 120_000);
