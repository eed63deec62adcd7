// The daemon child's stdout/stderr in a log file a person can open when the tray says "restarting":
// one line per output line, prefixed with a timestamp and the stream, appended across restarts
// and app runs, rotated by size. Writes are synchronous, as electron-log does: a few hundred bytes
// land in the page cache in microseconds, order is kept without a queue, and nothing waits in
// memory to be lost when the app itself is killed. The log must never take the supervisor down:
// the first disk error is reported once and everything after it is dropped.
// Secrets should not reach the daemon's output at all (its logger redacts them); masking here is a
// second line of defence, applied to whole lines so a token split across chunks is still caught.
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { API_KEY_PREFIX } from '../../shared/constants.js';
import type { DaemonStatus } from './supervisor.js';

export type DaemonLogStream = 'stdout' | 'stderr';

export interface DaemonLogOptions {
  /**
   * Folder of the log files (the platform's log folder in the app: user-config's userDirs().logs); created with mode
   * 0700. Required.
   */
  dir: string;
  /** Name of the current file; old ones get `.1` (newest) to `.<keep>`. Default `daemon.log`. */
  fileName?: string;
  /** A line that would take the file past this size starts a new file. Default 5 MiB. */
  maxBytes?: number;
  /** Rotated files kept besides the current one. Default 3 (`daemon.log.1` to `daemon.log.3`). */
  keep?: number;
  /**
   * Longest unterminated output kept waiting for its newline; beyond it the part is written as a line. Default 64 KiB.
   */
  maxLineBytes?: number;
  /** Secrets known right now (the running daemon's token), masked wherever they appear. Default none. */
  secrets?: () => Iterable<string | null | undefined>;
  /** Told once, at the first write that fails; output is dropped from then on. Default: console.error. */
  onError?: (err: Error) => void;
  /** Clock of the line timestamps. Default `() => new Date()`. */
  now?: () => Date;
}

const MASK = '[redacted]';
// The API key: the fixed prefix and its base64url body (43 characters; any length is masked).
const API_KEY = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9_-]+`, 'g');
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
// randomBytes(32) in base64url, the shape of the daemon token: masking a rare harmless 43-character
// word is the cheaper mistake.
const TOKEN_SHAPED = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;

/** `line` with API keys, Bearer credentials, token-shaped words and the given secrets replaced by `[redacted]`. */
export function maskSecrets(line: string, secrets: Iterable<string | null | undefined> = []): string {
  let out = line;
  for (const s of secrets) {
    // Short strings would mask ordinary words; real secrets here are 43+ characters.
    if (s && s.length >= 16) out = out.split(s).join(MASK);
  }
  return out.replace(API_KEY, `${API_KEY_PREFIX}${MASK}`).replace(BEARER, `$1${MASK}`).replace(TOKEN_SHAPED, MASK);
}

export class DaemonLog {
  /** Path of the current log file. */
  readonly file: string;
  private fd: number | null = null;
  private size = 0;
  private failed = false;
  private readonly partial: Record<DaemonLogStream, string> = { stdout: '', stderr: '' };

  constructor(private readonly options: DaemonLogOptions) {
    this.file = path.join(options.dir, options.fileName ?? 'daemon.log');
  }

  /** The supervisor's `output` callback: buffers up to each newline and writes whole lines. */
  readonly output = (chunk: string, stream: DaemonLogStream): void => {
    if (this.failed) return;
    const parts = (this.partial[stream] + chunk).split('\n');
    let rest = parts.pop() ?? '';
    const max = this.options.maxLineBytes ?? 64 * 1024;
    // A child printing without newlines must not grow memory without bound.
    if (Buffer.byteLength(rest) > max) {
      parts.push(rest);
      rest = '';
    }
    this.partial[stream] = rest;
    this.writeLines(parts.map((line) => this.format(stream, line)));
  };

  /** Writes a line of the app's own (`app` stream) after any waiting partial lines, e.g. at a restart. */
  note(message: string): void {
    this.flush();
    this.writeLines([this.format('app', message)]);
  }

  /** The note for a supervisor state change (never its token), written by main/index.ts. */
  noteStatus(s: DaemonStatus): void {
    if (s.state === 'starting') this.note(`daemon starting (pid ${s.pid ?? 'unknown'})`);
    else if (s.state === 'running')
      this.note(`daemon running (pid ${s.pid}, port ${s.port}${s.external ? ', started outside the app' : ''})`);
    else if (s.state === 'crashed')
      this.note(
        `daemon ended (${s.lastExit ?? 'unknown'}); next start ` +
          `in ${Math.max(0, (s.nextStartAt ?? Date.now()) - Date.now())} ms`,
      );
    else this.note(`daemon stopped${s.lastExit ? ` (${s.lastExit})` : ''}`);
  }

  /** Writes what waits without a newline (a child that died mid-line). */
  flush(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (!this.partial[stream]) continue;
      const line = this.partial[stream];
      this.partial[stream] = '';
      this.writeLines([this.format(stream, line)]);
    }
  }

  /** Flushes and closes the file; a later write opens it again. */
  close(): void {
    this.flush();
    this.closeFile();
  }

  private format(stream: DaemonLogStream | 'app', line: string): string {
    const text = maskSecrets(line.endsWith('\r') ? line.slice(0, -1) : line, this.options.secrets?.() ?? []);
    return `${(this.options.now?.() ?? new Date()).toISOString()} ${stream} ${text}\n`;
  }

  private writeLines(lines: readonly string[]): void {
    if (this.failed || !lines.length) return;
    try {
      const max = this.options.maxBytes ?? 5 * 1024 * 1024;
      for (const line of lines) {
        const bytes = Buffer.from(line);
        let fd = this.open();
        if (this.size > 0 && this.size + bytes.length > max) {
          this.rotate();
          fd = this.open();
        }
        this.writeAll(fd, bytes);
      }
    } catch (err) {
      this.fail(err);
    }
  }

  private writeAll(fd: number, bytes: Buffer): void {
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
    this.size += bytes.length;
  }

  private open(): number {
    if (this.fd !== null) return this.fd;
    mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
    // The folder may predate this app version, or have been made under another umask.
    chmodSync(this.options.dir, 0o700);
    const fd = openSync(this.file, 'a', 0o600);
    try {
      fchmodSync(fd, 0o600);
      this.size = fstatSync(fd).size;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.fd = fd;
    return fd;
  }

  /** daemon.log.(keep-1) → .keep, …, daemon.log → .1: the oldest falls off the end. */
  private rotate(): void {
    this.closeFile();
    const keep = this.options.keep ?? 3;
    if (keep <= 0) {
      rmSync(this.file, { force: true });
      return;
    }
    for (let i = keep - 1; i >= 1; i--) renameIfThere(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    renameSync(this.file, `${this.file}.1`);
  }

  private closeFile(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    this.size = 0;
    try {
      closeSync(fd);
    } catch {
      // Nothing is lost: every line was written synchronously before.
    }
  }

  private fail(err: unknown): void {
    this.failed = true;
    this.closeFile();
    const error = err instanceof Error ? err : new Error(String(err));
    // fs errors name the path and the cause, never the line being written.
    (
      this.options.onError ??
      ((e: Error) =>
        console.error(
          `renderbridge: the daemon log cannot be written (${e.message}); daemon output is dropped from now on`,
        ))
    )(error);
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
