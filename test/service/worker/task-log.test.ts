// Task logs as the worker writes them and the service reads them back, on real file storage:
// the head/tail cap (huge output stays within the cap, whole lines, one omission line), live
// segments readable while the run goes on, the final object once it ends (segments gone), a run
// whose worker died (segments only) still readable, tail segments that fall out of the cap
// deleted while the head stays, and a refused end told even after a refused segment was.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsObjectStorage } from '../../../service/adapters/fs-storage/fs-storage.js';
import { UrlSigner } from '../../../service/adapters/fs-storage/url-signer.js';
import { jobLogPrefix, runStem, segmentKey, taskLogSegment } from '../../../service/domain/task-log-keys.js';
import { listRuns, readRun } from '../../../service/logs/task-log-reader.js';
import { HeadTail } from '../../../service/worker/logs/head-tail.js';
import { TaskLog } from '../../../service/worker/logs/task-log.js';
import { makePreview } from '../../../service/worker/outputs/ffmpeg-images.js';

let root: string;
let storage: FsObjectStorage;
const WS = 'ws-1';

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-task-log-'));
  storage = new FsObjectStorage(path.join(root, 'objects'), new UrlSigner(randomBytes(32)), () => 'http://127.0.0.1:1');
  await storage.init();
});
afterAll(() => rm(root, { recursive: true, force: true }));

function open(jobId: string, opts: { maxBytes?: number; attempt?: number } = {}): TaskLog {
  const taskId = `chunk:${jobId}:0`;
  return new TaskLog({
    storage,
    stem: runStem(WS, jobId, taskLogSegment(taskId, jobId)!, opts.attempt ?? 1, Date.now()),
    start: {
      taskId,
      kind: 'render-chunk',
      attempt: opts.attempt ?? 1,
      worker: 'host/cpu0',
      startedAt: new Date().toISOString(),
      frames: [1, 2],
    },
    flushMs: 60_000, // flushed by hand: the test decides when bytes are stored
    redact: ['/srv/rb/work'],
    ...(opts.maxBytes ? { maxBytes: opts.maxBytes } : {}),
  });
}

async function text(jobId: string): Promise<{ text: string; live: boolean }[]> {
  const runs = await listRuns(storage, WS, jobId);
  return Promise.all(
    runs.map(async (r) => ({ text: Buffer.concat((await readRun(storage, r, 0)).chunks).toString(), live: !r.end })),
  );
}

describe('HeadTail', () => {
  it('keeps the first and last halves of huge output within the cap, whole lines, and counts what it left out', () => {
    const kept = new HeadTail(10_000);
    let total = 0;
    for (let i = 0; i < 100_000; i++) {
      const line = Buffer.from(`line ${i} ${'x'.repeat(i % 50)}\n`);
      total += line.length;
      kept.add(line);
    }
    const out = kept.render().toString();
    const lines = out.split('\n').filter(Boolean);
    const marker = lines.filter((l) => l.startsWith('[... '));
    expect(marker).toHaveLength(1);
    expect(out.length - marker[0]!.length - 1).toBeLessThanOrEqual(10_000);
    expect(kept.totalBytes).toBe(total);
    expect(marker[0]).toBe(`[... ${kept.omittedBytes} bytes omitted ...]`);
    expect(kept.headSize + kept.omittedBytes + (total - kept.tailStart)).toBe(total);
    // Every kept line is whole, the first lines and the very last one are there, in order.
    expect(lines[0]).toBe('line 0 ');
    expect(lines.at(-1)).toBe(`line 99999 ${'x'.repeat(99_999 % 50)}`);
    for (const l of lines) if (l !== marker[0]) expect(l).toMatch(/^line \d+ x*$/);
    const numbers = lines.filter((l) => l !== marker[0]).map((l) => Number(l.split(' ')[1]));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
  });

  it('leaves small output untouched, without an omission line', () => {
    const kept = new HeadTail(1000);
    for (const l of ['a\n', 'b\n', 'c\n']) kept.add(Buffer.from(l));
    expect(kept.render().toString()).toBe('a\nb\nc\n');
    expect(kept.omittedBytes).toBe(0);
  });
});

describe('TaskLog on file storage', () => {
  it('serves a running attempt from its segments, then the final object once it ended, segments deleted', async () => {
    const log = open('job-live');
    log.line('stdout', 'Read blend: /srv/rb/work/job-live/project/scene.blend');
    log.line('stderr', 'Warning: something');
    await log.flush();
    const mid = await text('job-live');
    expect(mid).toHaveLength(1);
    expect(mid[0]!.live).toBe(true);
    expect(mid[0]!.text).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z Read blend: <worker>\/job-live\/project\/scene\.blend\n.*Z \[stderr\] Warning: something\n$/,
    );
    expect(mid[0]!.text).not.toContain('/srv/rb');

    log.line('stdout', 'Fra:1 Mem:10M | Sample 4/4');
    await log.flush();
    expect((await text('job-live'))[0]!.text).toContain('Fra:1 Mem:10M');

    await log.close('done');
    const end = await text('job-live');
    expect(end).toEqual([{ live: false, text: expect.stringContaining('Fra:1 Mem:10M') }]);
    expect(end[0]!.text).toMatch(/\[renderbridge\] attempt ended: done\n$/);
    const keys = (await storage.list(jobLogPrefix(WS, 'job-live'))).map((o) => path.basename(o.key));
    expect(keys.sort()).toEqual([
      expect.stringMatching(/^a1-\d+\.end\.json$/),
      expect.stringMatching(/^a1-\d+\.json$/),
      expect.stringMatching(/^a1-\d+\.log$/),
    ]);
  });

  it('stores a run that ends before its first flush as its three objects only, no segment', async () => {
    const log = open('job-short');
    log.line('stdout', 'Fra:7 Mem:10M | Sample 4/4');
    // Nothing is stored until the first flush: a warm slot's short tasks cost no segment.
    expect(await storage.list(jobLogPrefix(WS, 'job-short'))).toEqual([]);
    await log.close('done');
    const keys = (await storage.list(jobLogPrefix(WS, 'job-short'))).map((o) => path.basename(o.key));
    expect(keys.sort()).toEqual([
      expect.stringMatching(/^a1-\d+\.end\.json$/),
      expect.stringMatching(/^a1-\d+\.json$/),
      expect.stringMatching(/^a1-\d+\.log$/),
    ]);
    const end = await text('job-short');
    expect(end).toEqual([
      { live: false, text: expect.stringMatching(/Z Fra:7 Mem:10M \| Sample 4\/4\n.*attempt ended: done\n$/) },
    ]);
  });

  it('still serves the segments of a run whose worker died before ending it', async () => {
    const log = open('job-crash');
    for (let i = 0; i < 5; i++) {
      log.line('stdout', `Fra:${i} rendering`);
      await log.flush();
    }
    // No close(): the process is gone. Its segments are all there is.
    const runs = await listRuns(storage, WS, 'job-crash');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.end).toBeUndefined();
    expect(runs[0]!.segments.length).toBe(5);
    const { chunks, to } = await readRun(storage, runs[0]!, 0);
    const t = Buffer.concat(chunks).toString();
    expect(
      t
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/^\S+ /, '')),
    ).toEqual([0, 1, 2, 3, 4].map((i) => `Fra:${i} rendering`));
    // Reading on from where a follower stopped gives only what is new.
    expect((await readRun(storage, runs[0]!, to)).chunks).toEqual([]);
    const half = (await readRun(storage, runs[0]!, runs[0]!.segments[2]!.offset)).chunks;
    expect(Buffer.concat(half).toString()).toMatch(/^\S+ Fra:2 rendering\n\S+ Fra:3/);
  });

  it('deletes tail segments that fall out of the cap while running, keeps the head, and marks the gap', async () => {
    const log = open('job-big', { maxBytes: 4096 });
    for (let i = 0; i < 400; i++) {
      log.line('stdout', `line ${String(i).padStart(4, '0')} ${'y'.repeat(40)}`);
      if (i % 10 === 9) await log.flush();
    }
    const runs = await listRuns(storage, WS, 'job-big');
    const stored = runs[0]!.segments.reduce((n, s) => n + s.size, 0);
    // The head's segments and the tail's: about the cap, never the 30 KB written.
    expect(stored).toBeLessThan(4096 + 2 * 10 * 80);
    const live = Buffer.concat((await readRun(storage, runs[0]!, 0)).chunks).toString();
    expect(live).toContain('line 0000');
    expect(live).toContain('line 0399');
    expect(live).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]/);

    await log.close('failed', 'Blender crashed (SIGKILL) in /srv/rb/work/job-big');
    const [final] = await text('job-big');
    expect(final!.live).toBe(false);
    expect(final!.text).toContain('line 0000');
    expect(final!.text).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
    expect(final!.text).toMatch(/attempt ended: failed: Blender crashed \(SIGKILL\) in <worker>\/job-big\n$/);
    expect(Buffer.byteLength(final!.text)).toBeLessThan(4096 + 200);
    // Every line whole: a timestamp, then the text.
    for (const l of final!.text.split('\n').filter(Boolean))
      expect(l).toMatch(/^(\S+Z (line \d{4} y{40}|\[renderbridge\] .*)|\[\.\.\. \d+ bytes omitted \.\.\.\])$/);
  });

  it('tells a refused end even after a refused segment was told: the run then reads as interrupted', async () => {
    const jobId = 'job-refused';
    const stem = runStem(WS, jobId, 'chunk-0', 1, Date.now());
    // Objects are never replaced: keys taken already refuse the first segment and the end's log,
    // as a remote worker's token refuses a job it holds no task of any more.
    for (const key of [segmentKey(stem, 1, 0), `${stem}.log`])
      await storage.put(key, Readable.from([Buffer.from('x')]));
    const told: { end: boolean; err: string }[] = [];
    const log = new TaskLog({
      storage,
      stem,
      start: {
        taskId: `chunk:${jobId}:0`,
        kind: 'render-chunk',
        attempt: 1,
        worker: 'h/c',
        startedAt: '',
        frames: [1],
      },
      flushMs: 60_000,
      onError: (err, end) => told.push({ end, err: String(err) }),
    });
    log.line('stdout', 'Fra:1');
    await log.flush();
    log.line('stdout', 'Fra:2');
    await log.flush();
    await log.close('released', 'paused for a priority-90 job after frame 1');
    // The second segment's failure is the same story as the first's; the end's is not.
    expect(told.map((t) => t.end)).toEqual([false, true]);
    expect(told[1]!.err).toContain(`${stem}.log`);
    expect((await listRuns(storage, WS, jobId))[0]!.end).toBeUndefined();
  });

  it("takes ffmpeg's own lines, so a failed finalize explains itself in its log", async () => {
    const lines: string[] = [];
    const bad = path.join(root, 'not-an-image.png');
    await writeFile(bad, 'this is not a PNG');
    await expect(
      makePreview({ input: bad, out: path.join(root, 'preview.jpg'), onLine: (_s, l) => lines.push(l) }),
    ).rejects.toThrow(/ffmpeg exited/);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).toMatch(/not-an-image\.png|Invalid data/);
  });

  it("names task folders from task ids and refuses ids that are no task's", () => {
    expect(taskLogSegment('chunk:j1:12', 'j1')).toBe('chunk-12');
    expect(taskLogSegment('validate:j1', 'j1')).toBe('validate');
    expect(taskLogSegment('../etc/passwd', 'j1')).toBeUndefined();
    expect(taskLogSegment('chunk:j1:..', 'j1')).toBeUndefined();
    expect(taskLogSegment('chunk:j1:a/b', 'j1')).toBeUndefined();
  });
});
