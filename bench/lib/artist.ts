// The artist side of `npm run bench:resubmit`: the real `renderbridge submit` (compiled dist/,
// the same client, packer and submission code the daemon runs) inside the artist namespace,
// reaching the service only through the delaying proxy on the shaped link.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, track } from './children.js';
import type { Netns } from './netns.js';

export interface SubmitOutcome {
  /** Epoch ms when the CLI was started and when it exited. */
  startedAt: number;
  endedAt: number;
  code: number | null;
  /** The --json document (null when stdout held none). */
  result: SubmitDocument | null;
  stderrTail: string;
}

/** The parts of `renderbridge submit --json`'s document the benchmark reads. */
export interface SubmitDocument {
  submission?: {
    step?: string;
    jobId?: string | null;
    error?: { name?: string; message?: string } | null;
    upload?: { mode?: string; bytesTotal?: number; bytesSkipped?: number; retries?: number } | null;
  };
}

export interface SubmitInput {
  blend: string;
  /** The artist's home folder: user config, caches (the packer's hash cache lives under it). */
  home: string;
  apiKey: string;
  serviceOrigin: string;
}

/**
 * Runs `renderbridge submit BLEND --frames 1 --no-wait --no-download --json`: it returns once the
 * render was requested, with the job id. The environment is only what a person's shell would
 * give it (PATH, HOME, the key and the service URL), so nothing of this machine's setup leaks in.
 */
export function submitFromArtist(
  ns: Netns,
  input: SubmitInput,
): { done: Promise<SubmitOutcome>; exited: () => boolean } {
  const args = [
    path.join(REPO_ROOT, 'bin', 'renderbridge.js'),
    'submit',
    input.blend,
    '--frames',
    '1',
    '--no-wait',
    '--no-download',
    '--json',
  ];
  const [cmd, argv] = ns.exec(ns.artist, process.execPath, args);
  const startedAt = performance.timeOrigin + performance.now();
  const child = track(
    spawn(cmd, argv, {
      cwd: input.home,
      env: {
        PATH: process.env.PATH,
        HOME: input.home,
        RENDERBRIDGE_API_KEY: input.apiKey,
        RENDERBRIDGE_SERVICE_URL: input.serviceOrigin,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited = false;
  const done = new Promise<SubmitOutcome>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      exited = true;
      let result: SubmitDocument | null;
      try {
        result = JSON.parse(stdout) as SubmitDocument;
      } catch {
        result = null;
      }
      resolve({ startedAt, endedAt: performance.timeOrigin + performance.now(), code, result, stderrTail: stderr });
    });
  });
  return { done, exited: () => exited };
}
