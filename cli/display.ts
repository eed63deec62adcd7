// What `renderbridge submit` / `jobs download` show while they work: progress bars on a terminal,
// one line per step and every tenth of progress when stderr is a pipe or a log file, nothing at
// all with --json (stdout then carries one JSON document and stderr only warnings), not even
// warnings with --quiet. Packing and uploading show bytes, rate and time left, and the bytes the
// farm already held ("Uploading 40 MB / 160 MB · 20 MB/s · 6 s left (340 MB already on the farm)").
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { JobProgress } from '../shared/api/progress.js';
import { TransferRate } from '../shared/client/transfer-rate.js';
import type { DownloadState } from '../shared/daemon/job-schemas.js';
import type { PackState, Submission, Transfer } from '../shared/daemon/submission-schemas.js';
import { submissionLine, transferLine } from '../shared/daemon/transfer-text.js';

export type PackPhase = NonNullable<PackState['phase']>;

export interface Display {
  /** Bytes of the pack's phase done and in all (this process packing). */
  pack(done: number, total: number, phase?: PackPhase): void;
  submission(s: Submission): void;
  progress(p: JobProgress): void;
  download(d: DownloadState): void;
  /** A line above the bars (warnings, notes); always printed, --json or not. */
  note(text: string): void;
  stop(): void;
}

export interface DisplayOptions {
  json: boolean;
  /** --quiet: not even the notes (errors still reach stderr through the command's failure). */
  quiet?: boolean;
  /** Default process.stderr. */
  stream?: NodeJS.WriteStream;
  /** Clock of the packing rate, for tests. Default `Date.now`. */
  now?: () => number;
}

/** The Transfer (with rate and time left) of a pack this process runs, measured afresh at each phase. */
export function packMeter(now: () => number = Date.now): (done: number, total: number, phase: PackPhase) => Transfer {
  let phase: PackPhase | undefined;
  let rate = new TransferRate({ now });
  return (done, total, p) => {
    if (p !== phase) rate = new TransferRate({ now });
    phase = p;
    const { bytesPerSecond, etaSeconds } = rate.update(done, total);
    return { bytesDone: done, bytesTotal: total, bytesPerSecond, etaSeconds };
  };
}

const VERB: Record<PackPhase, string> = { tracing: 'Tracing', hashing: 'Packing', zipping: 'Zipping' };

type BarName = 'pack' | 'upload' | 'render' | 'download';
const LABELS: Record<BarName, string> = {
  pack: 'pack    ',
  upload: 'upload  ',
  render: 'render  ',
  download: 'download',
};

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function createDisplay(options: DisplayOptions): Display {
  const stream = options.stream ?? process.stderr;
  if (options.quiet) return quietDisplay(null);
  if (options.json) return quietDisplay(stream);
  const meter = packMeter(options.now);
  // Bars only when a person watches: stdout piped into a script means lines, even on a terminal's stderr.
  return stream.isTTY && process.stdout.isTTY ? barDisplay(stream, meter) : lineDisplay(stream, meter);
}

function quietDisplay(stream: NodeJS.WritableStream | null): Display {
  const noop = (): void => {};
  return {
    pack: noop,
    submission: noop,
    progress: noop,
    download: noop,
    note: (t) => void stream?.write(`${t}\n`),
    stop: noop,
  };
}

/** Bars on a terminal (cli-progress redraws them in place). */
function barDisplay(stream: NodeJS.WriteStream, meter: ReturnType<typeof packMeter>): Display {
  const multi = new MultiBar(
    {
      stream,
      format: '{label} [{bar}] {percentage}% | {detail}',
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 20,
    },
    Presets.shades_classic,
  );
  const bars = new Map<BarName, SingleBar>();
  const set = (name: BarName, value: number, total: number, detail: string): void => {
    let bar = bars.get(name);
    if (!bar) {
      bar = multi.create(Math.max(1, total), 0, { label: LABELS[name], detail });
      bars.set(name, bar);
    }
    bar.setTotal(Math.max(1, total));
    bar.update(Math.min(value, Math.max(1, total)), { label: LABELS[name], detail });
  };
  let step = '';
  return {
    pack: (done, total, phase = 'hashing') =>
      set('pack', done, total, transferLine(VERB[phase], meter(done, total, phase))),
    submission: (s) => {
      if (s.step === 'packing' && s.pack) set('pack', s.pack.bytesDone, s.pack.bytesTotal, submissionLine(s) ?? '');
      if (s.upload)
        set('upload', s.upload.bytesDone, s.upload.bytesTotal, submissionLine({ ...s, step: 'uploading' }) ?? '');
      else if (s.step === 'uploading' || s.uploadedBytes > 0)
        set('upload', s.uploadedBytes, s.totalBytes, `${formatBytes(s.uploadedBytes)} / ${formatBytes(s.totalBytes)}`);
      if (s.step !== step && (s.step === 'validating' || s.step === 'rendering'))
        set('render', 0, 1, s.step === 'validating' ? 'validating the project…' : 'queued…');
      step = s.step;
    },
    progress: (p) => {
      const total = p.framesTotal ?? 0;
      const eta = p.etaSeconds != null ? `, ${Math.round(p.etaSeconds)} s left` : '';
      set('render', p.framesDone ?? 0, total, total ? `${p.framesDone ?? 0}/${total} frames${eta}` : p.status);
    },
    download: (d) =>
      set(
        'download',
        d.filesDone + d.skipped,
        d.files,
        `${d.filesDone + d.skipped}/${d.files} files, ${formatBytes(d.bytesDone)}`,
      ),
    note: (t) => multi.log(`${t}\n`),
    stop: () => multi.stop(),
  };
}

/** Plain lines for logs: each step once, then progress at every tenth. */
function lineDisplay(stream: NodeJS.WritableStream, meter: ReturnType<typeof packMeter>): Display {
  const say = (t: string): void => void stream.write(`${t}\n`);
  const lastTenth = new Map<string, number>();
  const tenth = (name: string, done: number, total: number, text: string): void => {
    if (total <= 0) return;
    const t = Math.floor((10 * done) / total);
    if (lastTenth.get(name) === t) return;
    lastTenth.set(name, t);
    say(`${name}: ${text}`);
  };
  let step = '';
  return {
    pack: (done, total, phase = 'hashing') =>
      tenth(`pack`, done, total, transferLine(VERB[phase], meter(done, total, phase))),
    submission: (s) => {
      if (s.step !== step) say(`step: ${s.step}${s.jobId ? ` (job ${s.jobId})` : ''}`);
      step = s.step;
      const line = submissionLine(s);
      if (s.step === 'packing' && s.pack && line) tenth('pack', s.pack.bytesDone, s.pack.bytesTotal, line);
      if (s.step !== 'uploading' || !line) return;
      const done = s.upload?.bytesDone ?? s.uploadedBytes;
      const total = s.upload?.bytesTotal ?? s.totalBytes;
      // Nothing left to send (the farm held every blob): said once.
      if (total === 0 && !lastTenth.has('upload')) {
        lastTenth.set('upload', 10);
        say(`upload: ${line}`);
      } else tenth('upload', done, total, line);
    },
    progress: (p) =>
      tenth('render', p.framesDone ?? 0, p.framesTotal ?? 0, `${p.framesDone ?? 0} of ${p.framesTotal ?? 0} frames`),
    download: (d) =>
      tenth('download', d.filesDone + d.skipped, d.files, `${d.filesDone + d.skipped} of ${d.files} files`),
    note: say,
    stop: () => {},
  };
}
