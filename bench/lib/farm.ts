// The farm side of `npm run bench:resubmit`, inside the farm namespace: the service as
// `renderbridge service` runs it (compiled dist/, SQLite, local files, one embedded worker slot
// with Blender, a temp data dir) and the delaying proxy the artist reaches it through. The
// benchmark itself talks to the service over the unshaped control link, never the measured one.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, startChild, track, type Child } from './children.js';
import type { ProxyChildInput, ProxyCommand } from './delay-proxy-child.js';
import type { RequestLogEntry } from './delay-proxy.js';
import type { Netns } from './netns.js';

export const SERVICE_PORT = 8420;
export const PROXY_PORT = 8421;
export const PING_PORT = 8422;
export const ECHO_PORT = 8423;
const API = '/api/external/v1';

export interface Service {
  /** API root over the control link (for the benchmark's own calls). */
  controlApi: string;
  /** Origin the artist uses: the proxy on the shaped link. */
  artistOrigin: string;
  /** Names GET /extensions lists (empty when the route is missing: a plain spec service). */
  extensions: string[];
  stop(): Promise<void>;
}

/**
 * Creates an API key of `workspace` in the data dir's database with `renderbridge admin
 * create-key`: the compiled code the service runs, so both agree on the database's migrations.
 */
export function createKey(dataDir: string, workspace: string): string {
  const r = spawnSync(
    process.execPath,
    [
      path.join(REPO_ROOT, 'bin', 'renderbridge.js'),
      'admin',
      'create-key',
      '--init',
      '--data-dir',
      dataDir,
      '--workspace',
      workspace,
      '--label',
      'bench',
    ],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    },
  );
  const key = r.stdout.trim().split('\n').at(-1);
  if (r.status !== 0 || !key) throw new Error(`renderbridge admin create-key failed (${r.status}): ${r.stderr}`);
  return key;
}

async function waitHealthy(url: string, child: ChildProcess, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the service exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the service did not answer ${url} within ${deadlineMs} ms`);
}

/**
 * Starts the service in the farm namespace on `dataDir`; `env` adds variables (such as
 * RENDERBRIDGE_BLOB_UPLOADS=0). Its log goes to `logFile`; `key` reads GET /extensions.
 */
export async function startService(
  ns: Netns,
  dataDir: string,
  env: Record<string, string>,
  logFile: string,
  key: string,
): Promise<Service> {
  const args = [
    path.join(REPO_ROOT, 'bin', 'renderbridge.js'),
    'service',
    '--host',
    '0.0.0.0',
    '--port',
    String(SERVICE_PORT),
    '--data-dir',
    dataDir,
    '--public-url',
    `http://${ns.farmIp}:${PROXY_PORT}`,
    '--workers',
    '1',
    '--log-level',
    'info',
  ];
  const [cmd, argv] = ns.exec(ns.farm, process.execPath, args);
  const child = track(
    spawn(cmd, argv, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const log = createWriteStream(logFile);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const controlOrigin = `http://${ns.controlIp}:${SERVICE_PORT}`;
  await waitHealthy(`${controlOrigin}/healthz`, child, 60_000);
  const res = await fetch(`${controlOrigin}${API}/extensions`, { headers: { authorization: `Bearer ${key}` } });
  const extensions = res.ok
    ? ((await res.json()) as { data: { extensions: { name: string }[] } }).data.extensions.map((e) => e.name)
    : [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    controlApi: `${controlOrigin}${API}`,
    artistOrigin: `http://${ns.farmIp}:${PROXY_PORT}`,
    extensions,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface Proxy {
  counts(): Promise<{ up: number; down: number; connections: number; open: number }>;
  requests(): Promise<RequestLogEntry[]>;
  resetAll(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the delaying proxies and echo servers (delay-proxy-child.ts) in the farm namespace. */
export async function startProxy(ns: Netns, delayMs: number): Promise<Proxy> {
  const input: ProxyChildInput = {
    host: ns.farmIp,
    servicePort: SERVICE_PORT,
    proxyPort: PROXY_PORT,
    pingPort: PING_PORT,
    echoPort: ECHO_PORT,
    delayMs,
  };
  const child: Child<unknown> = await startChild('delay-proxy-child.ts', input, {
    wrap: (cmd, args) => ns.exec(ns.farm, cmd, args),
  });
  let next = 0;
  const ask = <T>(cmd: ProxyCommand['cmd']): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const onMessage = (m: { id: number; result: T }) => {
        if (m.id !== id) return;
        child.process.off('message', onMessage);
        resolve(m.result);
      };
      child.process.on('message', onMessage);
      child.process.send({ id, cmd } satisfies ProxyCommand, (err) => err && reject(err));
    });
  return {
    counts: () => ask('counts'),
    requests: () => ask('requests'),
    resetAll: async () => (await ask<{ reset: number }>('reset')).reset,
    stop: () => child.stop(),
  };
}
