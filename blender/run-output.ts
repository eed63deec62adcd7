// What a Blender run's output and end read as: its lines (a runaway line cut rather than
// buffered forever) and its outcome, a result or the error that tells a cancel, a timeout or a
// crash (inside bubblewrap too) apart. run.ts feeds them.
import { constants as osConstants } from 'node:os';
import { basename } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Launch } from './build-kind.js';
import { BlenderCanceledError, BlenderCrashError, BlenderTimeoutError } from './errors.js';
import type { BlenderRunResult } from './run.js';
import type { BlenderLimits, StopReason } from './run-watch.js';

/** The name of signal number `n`, if it is one. */
function signalName(n: number): NodeJS.Signals | undefined {
  return (Object.entries(osConstants.signals) as [NodeJS.Signals, number][]).find(([, v]) => v === n)?.[0];
}

/** Longest line kept; a runaway line without newline is cut rather than buffered forever. */
const MAX_LINE_CHARS = 16_384;

/** Splits a stream into lines (`onData` on every chunk); a runaway line without newline is cut at MAX_LINE_CHARS. */
export function readLines(readable: NodeJS.ReadableStream, onData: () => void, push: (line: string) => void): void {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  readable.on('data', (chunk: Buffer) => {
    onData();
    pending += decoder.write(chunk);
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
      push(pending.slice(start, nl).replace(/\r$/, ''));
      start = nl + 1;
    }
    pending = pending.slice(start);
    if (pending.length > MAX_LINE_CHARS) {
      push(pending.slice(0, MAX_LINE_CHARS));
      pending = '';
    }
  });
  readable.on('end', () => {
    pending += decoder.end();
    if (pending) push(pending.replace(/\r$/, ''));
    pending = '';
  });
}

/** How a run ended, as its result or its error. */
export function runOutcome(
  how: Launch,
  exitCode: number | null,
  exitSignal: NodeJS.Signals | null,
  stopReason: StopReason | undefined,
  limits: BlenderLimits,
  run: { argv: string[]; durationMs: number; lastLines: string[] },
): BlenderRunResult | Error {
  // bubblewrap exits with 128 + N when Blender inside it died of signal N: a crash is a crash
  // whichever way the build was started (Blender's own exit codes are small).
  const inner =
    basename(how.command) === 'bwrap' && exitCode !== null && exitCode > 128 ? signalName(exitCode - 128) : undefined;
  const [code, sig] = inner ? [null, inner] : [exitCode, exitSignal];
  const details = { argv: run.argv, exitCode: code, signal: sig, durationMs: run.durationMs, lastLines: run.lastLines };
  if (stopReason === 'abort') return new BlenderCanceledError('Blender stopped: task canceled');
  if (stopReason === 'timeout')
    return new BlenderTimeoutError(`Blender timed out after ${limits.totalMs} ms`, { ...details, reason: 'timeout' });
  if (stopReason === 'idle')
    return new BlenderTimeoutError(`Blender printed nothing for ${limits.idleMs} ms`, { ...details, reason: 'idle' });
  if (sig) return new BlenderCrashError(`Blender crashed (${sig})`, { ...details, reason: 'crash' });
  return { exitCode: code ?? -1, signal: null, durationMs: run.durationMs, lastLines: run.lastLines, argv: run.argv };
}
