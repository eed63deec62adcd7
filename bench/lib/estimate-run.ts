// One scene of bench:estimate on a running service: upload, create, validate (the analysis-only
// memory estimate comes with it), POST /jobs/{id}/estimate and wait for it, then POST /render
// with the same request and time it to the job's completion stamp, reading the live ETA at the
// moment a quarter of the frames are done. Everything through the public API, as a client would.
import type { Estimate } from '../../shared/api/estimate.js';
import type { EtaBand, FrameStat } from '../../shared/api/frame-stats.js';
import type { RenderJobClient } from '../../shared/client/client.js';
import { requestOf, type EstimateScene } from './estimate-scenes.js';
import { validatedJob } from './render-jobs.js';

export interface SceneRun {
  scene: EstimateScene;
  estimate: Estimate;
  /** The sampled frames' rows, read once the estimate is ready (before the render adds its own). */
  sampleRows: FrameStat[];
  /** The render's own rows: every frame but the sampled ones. */
  renderRows: FrameStat[];
  /** POST /render to the job's completion stamp, seconds. */
  renderWall: number;
  /** POST /render to its first and last frame rows' finishedAt, seconds: the fixed costs before and after. */
  firstFrameAt: number;
  lastFrameAt: number;
  /** POST estimate to its finishedAt, seconds. */
  estimateWall: number;
  /**
   * The estimate's own Blender seconds read again once the render completed: less than at `ready` by
   * the scene load the render took over with the estimate's warm Blender (estimate-handover.ts).
   */
  ownAfterRender: number;
  /** The live ETA at the first poll with a quarter of the frames done, and when that was (s after POST /render). */
  eta25: { at: number; framesDone: number; eta: EtaBand | null } | null;
  /** Every progress poll while the render ran (s after POST /render), for the run's dump. */
  polls: { at: number; framesDone: number; eta: EtaBand | null }[];
  /**
   * The analysis-only memory estimate: vramMetadata's total (or the sum of its parts), with its band where it has one.
   */
  analysis: { bytes: number; low: number | null; high: number | null } | null;
}

const POLL_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function allRows(client: RenderJobClient, id: string): Promise<FrameStat[]> {
  const rows: FrameStat[] = [];
  for (let page = 1; ; page++) {
    const p = await client.listJobFrames(id, { page, pageSize: 1000 });
    rows.push(...p.data.frames);
    if (page >= p.pagination.totalPages) return rows;
  }
}

/**
 * The analysis-only estimate of a validated job: vramMetadata.estimatedBytes, or textures + geometry
 * where the analysis predates it.
 */
function analysisBytes(job: Awaited<ReturnType<RenderJobClient['getJob']>>): SceneRun['analysis'] {
  const v = job.analysis?.output?.vramMetadata as
    | {
        estimatedBytes?: number;
        estimatedLowBytes?: number;
        estimatedHighBytes?: number;
        textures: { estimatedBytes: number };
        geometry: { estimatedBytes: number };
      }
    | undefined;
  if (!v) return null;
  const bytes = v.estimatedBytes ?? v.textures.estimatedBytes + v.geometry.estimatedBytes;
  return { bytes, low: v.estimatedLowBytes ?? null, high: v.estimatedHighBytes ?? null };
}

async function estimateOf(client: RenderJobClient, id: string, s: EstimateScene): Promise<Estimate> {
  await client.startEstimate(id, { requestedRenderConfig: requestOf(s) });
  const deadline = Date.now() + 600_000;
  for (;;) {
    const e = await client.getEstimate(id);
    if (e.state === 'ready') return e;
    if (e.state !== 'sampling') throw new Error(`the ${s.name} estimate ended ${e.state}: ${e.reason}`);
    if (Date.now() > deadline) throw new Error(`the ${s.name} estimate took over 10 minutes`);
    await sleep(POLL_MS);
  }
}

/** Estimates, then renders, one scene; the job's frames are checked to have come out. */
export async function runScene(client: RenderJobClient, file: string, s: EstimateScene): Promise<SceneRun> {
  const id = await validatedJob(client, file);
  const analysis = analysisBytes(await client.getJob(id));
  const estimate = await estimateOf(client, id, s);
  const estimateWall = (Date.parse(estimate.finishedAt!) - Date.parse(estimate.startedAt)) / 1000;
  const sampleRows = await allRows(client, id);
  const t0Wall = Date.now();
  const t0 = performance.now();
  await client.renderJob(id, { requestedRenderConfig: requestOf(s) });
  let eta25: SceneRun['eta25'] = null;
  const polls: SceneRun['polls'] = [];
  for (;;) {
    const p = await client.getJobProgress(id);
    if (p.status === 'completed') break;
    const at = (performance.now() - t0) / 1000;
    polls.push({ at, framesDone: p.framesDone ?? 0, eta: p.etaBand ?? null });
    if (p.status === 'failed' || p.status === 'canceled')
      throw new Error(
        `the ${s.name} render ended ${p.status}: ${JSON.stringify((await client.getJob(id)).failedReason)}`,
      );
    const total = p.framesTotal ?? s.frames;
    if (!eta25 && (p.framesDone ?? 0) >= total / 4 && p.status === 'rendering')
      eta25 = { at, framesDone: p.framesDone ?? 0, eta: p.etaBand ?? null };
    await sleep(POLL_MS);
  }
  const renderWall = (Date.parse((await client.getJob(id)).updatedAt) - t0Wall) / 1000;
  const ownAfterRender = (await client.getEstimate(id)).ownCost.renderSeconds;
  const sampled = new Set(estimate.sampleFrames);
  const renderRows = (await allRows(client, id)).filter((r) => !sampled.has(r.frame));
  const out = (await client.getDownloads(id)).frameOutputs ?? [];
  if (out.length !== s.frames) throw new Error(`the ${s.name} render delivered ${out.length} frames, not ${s.frames}`);
  const stamps = renderRows.map((r) => (Date.parse(r.finishedAt) - t0Wall) / 1000);
  return {
    scene: s,
    estimate,
    sampleRows: sampleRows.filter((r) => sampled.has(r.frame)),
    renderRows,
    renderWall,
    firstFrameAt: Math.min(...stamps),
    lastFrameAt: Math.max(...stamps),
    estimateWall,
    ownAfterRender,
    eta25,
    polls,
    analysis,
  };
}
