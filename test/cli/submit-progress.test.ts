// The progress lines of `renderbridge submit` when stderr is a log or a pipe (createDisplay's line
// mode): packing and uploading with bytes, rate and time left, and the bytes the farm already held;
// and the shared wording (shared/daemon/transfer-text.ts) the tray uses too. The clock is the
// display's own option, so the rate is exact; the stream is a real Writable.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createDisplay } from '../../cli/display.js';
import type { PackState, Submission, Transfer } from '../../shared/daemon/submission-schemas.js';
import {
  formatBytesDecimal,
  formatSeconds,
  packLine,
  submissionLine,
  transferLine,
  uploadLine,
} from '../../shared/daemon/transfer-text.js';

const MB = 1_000_000;

function sink(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  let text = '';
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { stream: w as unknown as NodeJS.WriteStream, lines: () => text.split('\n').filter(Boolean) };
}

function submission(patch: Partial<Submission>): Submission {
  return {
    id: 's',
    path: '/p/scene.blend',
    step: 'uploading',
    jobId: null,
    uploadedBytes: 0,
    totalBytes: 0,
    pack: null,
    upload: null,
    preflight: null,
    warnings: [],
    error: null,
    outDir: null,
    createdAt: '',
    updatedAt: '',
    ...patch,
  };
}

const transfer = (
  bytesDone: number,
  bytesTotal: number,
  bytesPerSecond = 0,
  etaSeconds: number | null = null,
): Transfer => ({ bytesDone, bytesTotal, bytesPerSecond, etaSeconds });

describe('the transfer wording', () => {
  it('formats bytes in decimal units and durations', () => {
    expect([0, 999, 1000, 1_500_000, 120 * MB, 999_960, 2_100_000_000].map(formatBytesDecimal)).toEqual([
      '0 B',
      '999 B',
      '1.0 kB',
      '1.5 MB',
      '120 MB',
      '1.0 MB',
      '2.1 GB',
    ]);
    expect([0, 4.6, 65, 3725].map(formatSeconds)).toEqual(['0 s', '5 s', '1 min 05 s', '1 h 02 min']);
  });

  it("says the issue's lines, rate and time left only while known and not done", () => {
    expect(transferLine('Packing', transfer(120 * MB, 500 * MB, 80 * MB, 4.8))).toBe(
      'Packing 120 MB / 500 MB · 80 MB/s · 5 s left',
    );
    expect(transferLine('Packing', transfer(64_000, 500 * MB))).toBe('Packing 64 kB / 500 MB');
    expect(transferLine('Packing', transfer(500 * MB, 500 * MB, 80 * MB, 0))).toBe('Packing 500 MB / 500 MB');
    const up = {
      ...transfer(40 * MB, 160 * MB, 20 * MB, 6),
      mode: 'blobs' as const,
      bytesSkipped: 340 * MB,
      retries: 1,
    };
    expect(uploadLine(up)).toBe('Uploading 40 MB / 160 MB · 20 MB/s · 6 s left (340 MB already on the farm), 1 retry');
  });

  it('describes a background pack by its phase and end', () => {
    const base: PackState = {
      packId: 'p',
      state: 'packing',
      phase: 'tracing',
      progress: transfer(0, 0),
      result: null,
      error: null,
      createdAt: '',
      updatedAt: '',
    };
    expect(packLine(base)).toBe('Finding the files the scene uses (Blender)…');
    expect(packLine({ ...base, phase: 'zipping', progress: transfer(MB, 2 * MB, MB, 1) })).toBe(
      'Zipping 1.0 MB / 2.0 MB · 1.0 MB/s · 1 s left',
    );
    expect(
      packLine({
        ...base,
        state: 'failed',
        error: { name: 'PACK_FAILED', message: 'nope', details: [], type: 'api', metadata: {} },
      }),
    ).toBe('Packing failed: nope');
  });

  it('gives a submission line only while packing or uploading', () => {
    expect(submissionLine(submission({ step: 'packing', pack: transfer(MB, 4 * MB, MB, 3) }))).toBe(
      'Packing 1.0 MB / 4.0 MB · 1.0 MB/s · 3 s left',
    );
    expect(submissionLine(submission({ uploadedBytes: MB, totalBytes: 2 * MB }))).toBe('Uploading 1.0 MB / 2.0 MB');
    expect(submissionLine(submission({ totalBytes: 2 * MB, pack: transfer(MB, 2 * MB, MB, 1) }))).toBe(
      'Zipping 1.0 MB / 2.0 MB · 1.0 MB/s · 1 s left',
    );
    expect(
      submissionLine(
        submission({ step: 'rendering', upload: { ...transfer(1, 1), mode: 'blobs', bytesSkipped: 0, retries: 0 } }),
      ),
    ).toBeNull();
  });
});

describe('renderbridge submit progress lines (log mode)', () => {
  it('prints packing with the rate measured here and the time left, at each tenth', () => {
    let t = 0;
    const out = sink();
    const display = createDisplay({ json: false, stream: out.stream, now: () => t });
    display.pack(0, 0, 'tracing');
    for (let done = 0; done <= 100 * MB; done += 10 * MB) {
      display.pack(done, 100 * MB, 'hashing');
      t += 500; // 10 MB every half second: 20 MB/s
    }
    const lines = out.lines();
    expect(lines[0]).toBe('pack: Packing 0 B / 100 MB');
    expect(lines).toContain('pack: Packing 50 MB / 100 MB · 20 MB/s · 3 s left');
    expect(lines.at(-1)).toBe('pack: Packing 100 MB / 100 MB');
    expect(lines).toHaveLength(11);
  });

  it(
    'prints the upload with its rate, time left and the bytes the farm already had, and says so once when ' +
      'nothing is left to send',
    () => {
      const out = sink();
      const display = createDisplay({ json: false, stream: out.stream });
      const up = (done: number, patch: Partial<NonNullable<Submission['upload']>> = {}) =>
        submission({
          upload: {
            ...transfer(done, 160 * MB, 20 * MB, (160 * MB - done) / (20 * MB)),
            mode: 'blobs',
            bytesSkipped: 340 * MB,
            retries: 0,
            ...patch,
          },
        });
      display.submission(up(0));
      display.submission(up(80 * MB));
      display.submission(up(81 * MB)); // the same tenth: no line
      display.submission(submission({ step: 'creating' }));
      expect(out.lines()).toEqual([
        'step: uploading',
        'upload: Uploading 0 B / 160 MB · 20 MB/s · 8 s left (340 MB already on the farm)',
        'upload: Uploading 80 MB / 160 MB · 20 MB/s · 4 s left (340 MB already on the farm)',
        'step: creating',
      ]);
      const again = sink();
      const resubmit = createDisplay({ json: false, stream: again.stream });
      const nothing = submission({ upload: { ...transfer(0, 0), mode: 'blobs', bytesSkipped: 500 * MB, retries: 0 } });
      resubmit.submission(nothing);
      resubmit.submission(nothing);
      expect(again.lines()).toEqual(['step: uploading', 'upload: Uploading… (500 MB already on the farm)']);
    },
  );

  it('prints nothing but notes with --json, and nothing at all with --quiet', () => {
    const json = sink();
    const d = createDisplay({ json: true, stream: json.stream });
    d.pack(1, 2, 'hashing');
    d.submission(submission({ upload: { ...transfer(1, 2), mode: 'single-put', bytesSkipped: 0, retries: 0 } }));
    d.note('warning: x');
    expect(json.lines()).toEqual(['warning: x']);
    const quiet = sink();
    const q = createDisplay({ json: false, quiet: true, stream: quiet.stream });
    q.pack(1, 2, 'hashing');
    q.note('warning: x');
    expect(quiet.lines()).toEqual([]);
  });
});
