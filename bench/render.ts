// Render benchmark: 24 frames of a fixture at 160x90 through the whole service on one render
// slot, against bare `blender -b FILE -E CYCLES -s 1 -e 24 -a` with the same settings, in the
// same run. Targets: service wall time <= 1.15x bare Blender's, and < 3 s from POST /render to
// the first frame started. Not a test; `npm run bench:render`.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RenderJobClient } from '../shared/client/client.js';
import { createApiKey } from '../service/domain/api-keys.js';
import { openKeyStore } from '../service/stack.js';
import { buildFixture } from '../test/helpers/fixtures.js';
import { atExit, startChild, track } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, markdownTable, median, verdict, writeResultsSection, type Row } from './lib/results.js';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const FRAMES = 24;
const [WIDTH, HEIGHT] = [160, 90];
const SAMPLES = 4;
const TARGET_RATIO = 1.15;
const TARGET_FIRST_FRAME_S = 3;

/** Bare Blender with the service's settings (resolution, samples, no denoiser, PNG), timed start to exit. */
async function bareBlender(file: string, outDir: string): Promise<number> {
  const expr = [
    'import bpy',
    's = bpy.context.scene',
    `s.render.resolution_x = ${WIDTH}`,
    `s.render.resolution_y = ${HEIGHT}`,
    's.render.resolution_percentage = 100',
    `s.cycles.samples = ${SAMPLES}`,
    's.cycles.use_denoising = False',
  ].join('; ');
  const args = ['-b', '-Y', file, '-E', 'CYCLES', '--python-expr', expr, '-o', path.join(outDir, 'f_####'), '-F', 'PNG', '-s', '1', '-e', String(FRAMES), '-a'];
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = track(spawn('blender', args, { stdio: 'ignore' }));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`blender exited ${code}`))));
  });
  const seconds = (performance.now() - t0) / 1000;
  const written = (await readdir(outDir)).filter((f) => f.endsWith('.png')).length;
  if (written !== FRAMES) throw new Error(`bare Blender wrote ${written} frames, not ${FRAMES}`);
  return seconds;
}

interface ServiceRun {
  seconds: number;
  firstFrame: number;
}

/** Poll interval until the job turns `rendering`: fine enough for a first-frame time near 1 s. */
const FIRST_FRAME_POLL_MS = 50;
/** Poll interval afterwards: the end time is the service's own completion stamp, not the poll. */
const COMPLETION_POLL_MS = 250;

/**
 * One job through the service: validated first (untimed), then POST /render to `completed`.
 * The end is the job's `updatedAt` as the service stamped it when it completed the job (the
 * service runs on this machine's clock), so the benchmark needs no 20 ms polling: on 2 cores
 * that polling alone cost the service ~0.15 s of CPU per job beside Blender and made the run
 * it measures ~10% slower.
 */
async function serviceRender(client: RenderJobClient, slug: string): Promise<ServiceRun> {
  const job = await client.createJob({ slug });
  await client.validateJob(job.id);
  await client.waitForStatus(job.id, ['validated'], { intervalMs: 100, timeoutMs: 120_000 });
  const t0 = performance.now();
  const t0Wall = Date.now();
  await client.renderJob(job.id, {
    requestedRenderConfig: { colorManagementPreset: 'default', frameRanges: [`1-${FRAMES}`], resolution: [WIDTH, HEIGHT], sampleCount: SAMPLES },
  });
  let firstFrame = NaN;
  for (;;) {
    // The small progress answer carries the status.
    const { status } = await client.getJobProgress(job.id);
    // `rendering` is set when Blender prints the first frame's first line.
    if (Number.isNaN(firstFrame) && ['rendering', 'finalizing', 'completed'].includes(status)) firstFrame = (performance.now() - t0) / 1000;
    if (status === 'completed') break;
    if (status === 'failed' || status === 'canceled') throw new Error(`job ${status}: ${JSON.stringify((await client.getJob(job.id)).failedReason)}`);
    await new Promise((r) => setTimeout(r, Number.isNaN(firstFrame) ? FIRST_FRAME_POLL_MS : COMPLETION_POLL_MS));
  }
  const seenAt = Date.now();
  const completedAt = Date.parse((await client.getJob(job.id)).updatedAt);
  if (!(completedAt >= t0Wall && completedAt <= seenAt)) throw new Error(`the job's completion stamp ${new Date(completedAt).toISOString()} is outside the run`);
  const seconds = (completedAt - t0Wall) / 1000;
  const frames = (await client.getDownloads(job.id)).frameOutputs ?? [];
  if (frames.length !== FRAMES) throw new Error(`the service delivered ${frames.length} frames, not ${FRAMES}`);
  return { seconds, firstFrame };
}

async function main(): Promise<void> {
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-render-'));
  atExit(() => rmSync(dataDir, { recursive: true, force: true }));
  const blend = await buildFixture('basic');
  const service = await startChild<{ origin: string; baseUrl: string }>('service-child.ts', { dataDir, workers: 1 });
  const rows: Row[] = [];
  const bare: number[] = [];
  const svc: ServiceRun[] = [];
  try {
    const store = await openKeyStore(dataDir);
    const { key } = await createApiKey(store.keys, { workspace: 'bench', label: 'bench' });
    await store.close();
    const client = new RenderJobClient({ baseUrl: service.ready.baseUrl, apiKey: key });
    const uploads = [];
    for (let i = 0; i < ROUNDS + 1; i++) uploads.push((await client.uploadProject(blend)).slug);
    // Warm-up: page cache, Blender's first start, the service's JIT.
    await serviceRender(client, uploads.pop()!);
    for (let round = 1; round <= ROUNDS; round++) {
      const out = await mkdtemp(path.join(dataDir, 'bare-'));
      const order = round % 2 ? (['bare', 'service'] as const) : (['service', 'bare'] as const);
      for (const which of order) {
        if (which === 'bare') {
          const s = await bareBlender(blend, out);
          bare.push(s);
          rows.push({ round: String(round), run: 'bare blender', 'wall s': s.toFixed(2), 'to first frame s': '' });
        } else {
          const r = await serviceRender(client, uploads.pop()!);
          svc.push(r);
          rows.push({ round: String(round), run: 'service', 'wall s': r.seconds.toFixed(2), 'to first frame s': r.firstFrame.toFixed(2) });
        }
        console.log(consoleTable([rows.at(-1)!]));
      }
      await rm(out, { recursive: true, force: true });
    }
  } finally {
    await service.stop();
  }
  const others = otherLoad();
  const ratio = median(svc.map((r) => r.seconds)) / median(bare);
  const first = median(svc.map((r) => r.firstFrame));
  const verdicts: Row[] = [
    {
      'bare s': median(bare).toFixed(2),
      'service s': median(svc.map((r) => r.seconds)).toFixed(2),
      'service / bare': `${ratio.toFixed(3)}x`,
      [`<= ${TARGET_RATIO}x`]: verdict(ratio <= TARGET_RATIO),
      'POST /render to first frame': `${first.toFixed(2)} s`,
      [`< ${TARGET_FIRST_FRAME_S} s`]: verdict(first < TARGET_FIRST_FRAME_S),
    },
  ];
  console.log(`\n${consoleTable(rows)}\n\n${consoleTable(verdicts)}`);
  const body = `${machineMarkdown()}
${loadNote(busy, others)}

Setup: the \`basic\` fixture (cube, 2 cameras, 2 view layers, Cycles), ${FRAMES} frames at ${WIDTH}x${HEIGHT},
${SAMPLES} samples, denoising off, PNG. Bare: \`blender -b -Y FILE -E CYCLES --python-expr <same settings> -o DIR/f_#### -F PNG -s 1 -e ${FRAMES} -a\`,
start to exit. Service: the reference service in a child process with one CPU render slot; each job is
uploaded and validated first (untimed), then timed from \`POST /render\` to the moment the service marked
it \`completed\` (the job's \`updatedAt\` stamp, same machine clock; plan, one Blender process for the
${FRAMES}-frame chunk, promotion of each frame, finalize: frame files and zip into storage). "To first frame"
is \`POST /render\` until the job turns \`rendering\`, which the worker sets on Blender's first \`Fra:\` line,
seen by polling \`GET /jobs/{id}/progress\` every ${FIRST_FRAME_POLL_MS} ms; afterwards the bench polls every
${COMPLETION_POLL_MS} ms only to learn that the job is done, so its own requests hardly compete with Blender for the 2 cores. One warm-up job first; ${ROUNDS} rounds,
alternating which goes first; medians.

${markdownTable(rows)}

${markdownTable(verdicts)}
`;
  await writeResultsSection('render', 'Render: service vs bare Blender (npm run bench:render)', body);
  console.log(`\nwrote bench/RESULTS.md; overall ${verdict(ratio <= TARGET_RATIO && first < TARGET_FIRST_FRAME_S)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
