// The built `renderbridge` command, as `npx renderbridge` runs it after `npm install`.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/e2e.js';
import { createJob } from '../helpers/flow.js';
import { api } from '../helpers/http.js';

const run = promisify(execFile);
const BIN = path.resolve('bin/renderbridge.js');
let dataDir: string;

beforeAll(async () => {
  if (!existsSync('dist/cli/index.js')) await run('npm', ['run', '--silent', 'build']);
  dataDir = await mkdtemp(path.join(tmpdir(), 'rb-cli-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/** Starts `renderbridge service` and resolves once it printed its base URL. */
function startService(): Promise<{
  baseUrl: string;
  child: ReturnType<typeof spawn>;
  stderr: () => string;
  exited: Promise<number | null>;
}> {
  const child = spawn(process.execPath, [BIN, 'service', '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${err}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /API base URL: (\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ baseUrl: m[1]!, child, stderr: () => err, exited });
      }
    });
    child.stdout.resume();
    child.on('error', reject);
  });
}

describe('renderbridge service', () => {
  it('tells how to get a key, serves /healthz, stops on SIGTERM and keeps its jobs across a restart', async () => {
    const first = await startService();
    expect(first.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/external\/v1$/);
    // The hint follows the base URL once the key store was read.
    await waitUntil('the API key hint', () => first.stderr().includes('renderbridge admin create-key') || undefined, {
      timeoutMs: 10_000,
    });
    expect(first.stderr()).toContain('renderbridge admin create-key');
    const origin = first.baseUrl.replace('/api/external/v1', '');
    const health = await fetch(`${origin}/healthz`);
    expect(await health.json()).toMatchObject({ status: 'ok' });

    const { stdout } = await run(process.execPath, [
      BIN,
      'admin',
      'create-key',
      '--data-dir',
      dataDir,
      '--workspace',
      'studio',
      '--label',
      'cli test',
    ]);
    const key = stdout.trim().split('\n').at(-1)!;
    const job = await createJob(api(first.baseUrl, key));

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await startService();
    try {
      expect(second.stderr()).not.toContain('No API key yet');
      const again = await api(second.baseUrl, key)('GET', `/jobs/${job.id}`);
      expect(again.status).toBe(200);
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  });

  it('exits 2 on a usage error and says what is wrong', async () => {
    const r = await run(process.execPath, [BIN, 'admin', 'create-key', '--data-dir', dataDir]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(r).toMatchObject({ code: 2 });
    expect((r as { stderr: string }).stderr).toContain('--workspace');
  });
});
