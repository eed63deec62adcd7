// The add-on's path for `npm run bench:resubmit`: a real `renderbridge daemon` (compiled dist/)
// started once in the artist namespace and kept running across the steps, as on an artist's
// machine, and daemon-driver.ts making the add-on's calls to it for each submit. The daemon
// reaches the service only through the delaying proxy on the shaped link, like the CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { traceDependencies } from '../../blender/trace/trace-dependencies.js';
import type { SubmitInput, SubmitOutcome } from './artist.js';
import { REPO_ROOT, track } from './children.js';
import type { DriverInput, DriverOutput } from './daemon-driver.js';
import type { Netns } from './netns.js';

/** The add-on's pack poll (host-addon/renderbridge/session.py PACK_S). */
const ADDON_PACK_POLL_MS = 500;

export interface ArtistDaemon {
  port: number;
  token: string;
  stop(): Promise<void>;
}

/**
 * Starts `renderbridge daemon` in the artist namespace with `home` as its HOME and state folder's
 * parent, the API key in RENDERBRIDGE_API_KEY and the service URL as a flag; resolves once its
 * state file (port and token, written once it listens) is there.
 */
export async function startArtistDaemon(ns: Netns, input: Omit<SubmitInput, 'blend'>): Promise<ArtistDaemon> {
  const stateDir = path.join(input.home, 'daemon-state');
  await mkdir(input.home, { recursive: true });
  const args = [
    path.join(REPO_ROOT, 'bin', 'renderbridge.js'),
    'daemon',
    '--port',
    '0',
    '--state-dir',
    stateDir,
    '--service',
    input.serviceOrigin,
    '--downloads',
    path.join(input.home, 'outputs'),
    '--log-level',
    'info',
  ];
  const [cmd, argv] = ns.exec(ns.artist, process.execPath, args);
  const child: ChildProcess = track(
    spawn(cmd, argv, {
      cwd: input.home,
      env: {
        PATH: process.env.PATH,
        HOME: input.home,
        RENDERBRIDGE_API_KEY: input.apiKey,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const log = createWriteStream(path.join(input.home, 'daemon.log'));
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const end = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the daemon exited (${child.exitCode ?? child.signalCode}); see ${input.home}/daemon.log`);
    const text = await readFile(path.join(stateDir, 'daemon.json'), 'utf8').catch(() => null);
    if (text) {
      const state = JSON.parse(text) as { port: number; token: string };
      return {
        port: state.port,
        token: state.token,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        },
      };
    }
    if (Date.now() > end) throw new Error(`the daemon wrote no state file within 60 s; see ${input.home}/daemon.log`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * What the add-on collects in the artist's open Blender before it calls the daemon (its own
 * collector, run headless here once, untimed: inside a running Blender it takes milliseconds).
 */
export async function collectDependencies(blend: string): Promise<unknown[]> {
  return traceDependencies({ blender: process.env.RENDERBRIDGE_BLENDER ?? 'blender', file: blend, timeoutMs: 120_000 });
}

/** The add-on's "Render on farm" through `daemon`, as a SubmitOutcome the step can time. */
export function submitThroughDaemon(
  ns: Netns,
  daemon: ArtistDaemon,
  blend: string,
  dependencies: unknown[],
): {
  done: Promise<SubmitOutcome & { marks: { packReadyAt: number | null; submittedAt: number | null } }>;
  exited: () => boolean;
} {
  const input: DriverInput = {
    port: daemon.port,
    token: daemon.token,
    blend,
    dependencies,
    packPollMs: ADDON_PACK_POLL_MS,
  };
  let exited = false;
  const done = (async () => {
    // The driver's own start (Node, tsx) is not timed: its startedAt is taken just before POST /packs.
    const [cmd, argv] = ns.exec(ns.artist, process.execPath, [
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'bench', 'lib', 'daemon-driver.ts'),
      JSON.stringify(input),
    ]);
    const child = track(spawn(cmd, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    exited = true;
    let out: DriverOutput | null;
    try {
      out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as DriverOutput;
    } catch {
      out = null;
    }
    const s = out?.submission;
    const failed = !out || out.error !== null || !s || s.step === 'failed';
    return {
      startedAt: out?.startedAt ?? 0,
      endedAt: out?.endedAt ?? 0,
      code: failed ? (code === 0 ? 1 : code) : 0,
      result: s ? { submission: { step: s.step, jobId: s.jobId, error: s.error, upload: s.upload } } : null,
      stderrTail: out?.error ?? stderr,
      marks: { packReadyAt: out?.packReadyAt ?? null, submittedAt: out?.submittedAt ?? null },
    };
  })();
  return { done, exited: () => exited };
}
