// The service as a user starts it, for bench:render: `renderbridge service` (bin/renderbridge.js,
// the compiled dist/) on a fresh data folder with its default settings and logging, its output read
// the way a terminal reads it (every line consumed as it comes). Only the data folder, the address
// and the builds are set. The API key comes from `renderbridge admin create-key`.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RenderJobClient } from '../../shared/client/client.js';
import { REPO_ROOT, track } from './children.js';
import { createKey } from './farm.js';
import type { RenderService } from './render-jobs.js';

export interface CliServiceOptions {
  /** `--blender` builds; with any, `--no-blender-from-path`. Default none (PATH's blender). */
  blenderPaths?: readonly string[];
  /** Extra arguments after the defaults (say `--log-level silent` for the comparison). Default none. */
  args?: readonly string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Starts `renderbridge service` and waits until it answers /healthz. */
export async function startCliService(o: CliServiceOptions = {}): Promise<RenderService & { lines: () => number }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-cli-'));
  const key = createKey(dataDir, 'bench');
  const port = await freePort();
  const builds = (o.blenderPaths ?? []).flatMap((p) => ['--blender', p]);
  const args = [
    path.join(REPO_ROOT, 'bin', 'renderbridge.js'),
    'service',
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    ...builds,
    ...(builds.length ? ['--no-blender-from-path'] : []),
    ...(o.args ?? []),
  ];
  // A terminal gets pretty lines (the default format picks them for a TTY): asked for by name here,
  // since the bench reads the output through a pipe.
  const child = track(
    spawn(process.execPath, [...args, '--log-format', 'pretty'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let lines = 0;
  const count = (d: Buffer) => {
    for (const b of d) if (b === 10) lines++;
  };
  child.stdout!.on('data', count);
  child.stderr!.on('data', count);
  const baseUrl = `http://127.0.0.1:${port}/api/external/v1`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`renderbridge service exited (${child.exitCode}) before it answered`);
    if (
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error('renderbridge service did not answer /healthz within 60 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    client: new RenderJobClient({ baseUrl, apiKey: key }),
    pid: child.pid!,
    baseUrl,
    apiKey: key,
    dataDir,
    stop,
    lines: () => lines,
  };
}
