// POST, GET and DELETE /jobs/{id}/estimate (extension estimate). POST starts the estimate of a
// `validated` job: one task that a render slot takes (worker/handlers/estimate-sample.ts); the
// job's status does not move, so a spec client sees it `validated` throughout. GET answers the
// figures from the sampled frames' statistics (kept with the estimate), the farm's slots and the queue now.
// DELETE cancels it. Another workspace's job is a 404, as everywhere.
import { taskScheduling } from '../domain/scheduling.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { IDEMPOTENT_REPLAY_HEADER } from '../../shared/constants.js';
import type { Estimate } from '../../shared/api/estimate.js';
import { ROUTES } from '../../shared/routes.js';
import { estimateFigures, parseRates, type FarmSlot } from '../domain/estimate-figures.js';
import { estimateTaskId, sameRequest, type EstimateInternal } from '../domain/estimate-state.js';
import { jobFrames } from './frame-stats.js';
import { checkAgainstAnalysis } from '../domain/render-config.js';
import { ApiError } from '../http/api-error.js';
import { requireAuth } from '../http/auth.js';
import type { ServiceContext } from '../context.js';
import type { JobRecord } from '../ports/jobs.js';
import type { QueueLoad } from '../ports/tasks.js';
import type { WorkerRecord, WorkerRegistryReader } from '../ports/workers.js';
import { loadJob } from './jobs.js';

export interface EstimateRouteDeps {
  ctx: ServiceContext;
  /** The farm's slots and queue for the wall time and the memory fit; without them, one free slot and no queue. */
  workers?: { registry: WorkerRegistryReader; queue: QueueLoad };
  /** Clock, epoch ms. Default Date.now. */
  now?: () => number;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * The farm's render slots now: those of workers whose heartbeat is fresh, with their GPU's memory.
 * With `warmJobId` (the job estimated, while its estimate's Blender may still wait for the render):
 * a slot whose only tasks are that job's estimate is free (it ends as the estimate does; a report
 * a heartbeat old still shows it), and a slot holding that job's Blender is warm.
 */
export function farmSlots(workers: readonly WorkerRecord[], now: number, warmJobId?: string): FarmSlot[] {
  const slots: FarmSlot[] = [];
  const ownEstimate = (s: WorkerRecord['slots'][number]) =>
    warmJobId !== undefined &&
    s.tasks.length > 0 &&
    s.tasks.every((t) => t.jobId === warmJobId && t.taskId.startsWith(estimateTaskId(warmJobId)));
  for (const w of workers) {
    if (w.state !== 'running' || now - w.heartbeatAt > 3 * w.heartbeatIntervalMs) continue;
    for (const s of w.slots) {
      if (s.device.kind === 'control') continue;
      const gpu = s.device.kind === 'gpu' ? w.gpus.find((g) => g.uuid === s.device.uuid) : undefined;
      const warm = warmJobId !== undefined && s.warmJobId === warmJobId;
      const free = s.state === 'idle' || ownEstimate(s);
      slots.push({
        kind: s.device.kind,
        memoryBytes: gpu ? gpu.memoryMiB * 2 ** 20 : null,
        free,
        ...(warm && { warm }),
      });
    }
  }
  return slots;
}

/** The answer for a job's stored estimate: figures from its frames' rows and the farm as it is now. */
export async function presentEstimate(
  rec: JobRecord,
  est: EstimateInternal,
  deps: Pick<EstimateRouteDeps, 'workers'> & {
    rates: Readonly<Record<string, number>>;
    now: number;
    /** estimateWarmKeepSeconds: past it the estimate's Blender is gone, whatever a report says. Default: reports. */
    warmKeepSeconds?: number;
  },
): Promise<Estimate> {
  const [workers, load] = deps.workers
    ? await Promise.all([deps.workers.registry.listWorkers(), deps.workers.queue.countsByKind()])
    : [[], undefined];
  // The estimate's Blender serves only the render of this request, before the job moves on and within the keep time.
  const kept =
    est.state !== 'failed' &&
    est.state !== 'canceled' &&
    rec.job.status === 'validated' &&
    !rec.internal.renderRequestedAt &&
    (deps.warmKeepSeconds === undefined ||
      (deps.warmKeepSeconds > 0 &&
        (!est.finishedAt || deps.now < Date.parse(est.finishedAt) + deps.warmKeepSeconds * 1000)));
  const slots = farmSlots(workers, deps.now, kept ? rec.job.id : undefined);
  const samples = est.samples ?? [];
  const meanSeconds = samples.length ? samples.reduce((s, r) => s + r.seconds, 0) / samples.length : 0;
  const renderSlots = Math.max(1, slots.length);
  // Other jobs' queued chunks, each counted as one of this job's frames: a rough wait, said so in the docs.
  const queueAheadSeconds = Math.round((((load?.['render-chunk'].queued ?? 0) * meanSeconds) / renderSlots) * 10) / 10;
  const frames = jobFrames(est.frameRanges);
  const figures = estimateFigures({
    frames,
    samples,
    kept: est.frames ?? [],
    loadSeconds: est.loadSeconds ?? [],
    warmupSeconds: est.warmupSeconds ?? [],
    callSeconds: est.callSeconds ?? [],
    steps: est.steps ?? [],
    // The estimate's own wait for its project before Blender: each slot of the render waits the same.
    overheadSeconds: mean(est.prepareSeconds ?? []),
    outputBytes: est.outputBytes ?? [],
    slots,
    queueAheadSeconds,
    rates: deps.rates,
    ...(deps.warmKeepSeconds !== undefined && { warmKeepSeconds: deps.warmKeepSeconds }),
  });
  // A sampling estimate whose job moved on (rendered, canceled) was stopped by that: no worker writes it again.
  const state =
    est.state === 'sampling' && (rec.job.status !== 'validated' || rec.internal.renderRequestedAt)
      ? 'canceled'
      : est.state;
  const own = est.ownNormalizedSeconds ?? 0;
  const ownRate = figures
    ? (deps.rates[figures.device] ?? (figures.device !== 'CPU' ? deps.rates.GPU : undefined))
    : deps.rates.CPU;
  const band = (b: { value: number; low: number; high: number; basis: number } | null) =>
    b ? { value: b.value, low: b.low, high: b.high, frames: b.basis } : null;
  return {
    jobId: rec.job.id,
    state,
    requestedRenderConfig: est.requestedConfig,
    reason: est.reason ?? null,
    sampleFrames: est.frames ?? [],
    framesTotal: est.frameRanges ? frames.length : null,
    figures: figures && {
      device: figures.device,
      framesToRender: figures.framesToRender,
      wallSeconds: band(figures.wallSeconds)!,
      renderSeconds: band(figures.renderSeconds)!,
      normalizedSeconds: band(figures.normalizedSeconds)!,
      cost: band(figures.cost),
      loadSeconds: band(figures.loadSeconds),
      outputBytes: band(figures.outputBytes),
      peakMemoryBytes: band(figures.peakMemoryBytes),
      memory: { summary: figures.memorySummary, slots: figures.slotFits },
      queueAheadSeconds,
    },
    ownCost: {
      renderSeconds: est.ownSeconds ?? 0,
      normalizedSeconds: own,
      cost:
        ownRate !== undefined && est.ownSeconds !== undefined
          ? Math.round((est.ownSeconds / 3600) * ownRate * 100) / 100
          : null,
    },
    warnings: figures?.warnings ?? [],
    startedAt: est.startedAt,
    finishedAt: est.finishedAt ?? null,
  };
}

export const estimateRoutes: FastifyPluginAsyncZod<EstimateRouteDeps> = async (app, deps) => {
  const { ctx } = deps;
  let rates: Record<string, number>;
  try {
    rates = parseRates(ctx.config.estimateRates);
  } catch (err) {
    throw new Error(`estimateRates (--estimate-rates): ${(err as Error).message}`, { cause: err });
  }
  const now = deps.now ?? Date.now;
  const present = (rec: JobRecord, est: EstimateInternal) =>
    presentEstimate(rec, est, { ...deps, rates, now: now(), warmKeepSeconds: ctx.config.estimateWarmKeepSeconds });
  const notAllowed = (rec: JobRecord) =>
    new ApiError('ESTIMATE_NOT_ALLOWED', { metadata: { jobId: rec.job.id, status: rec.job.status } });

  // One task per estimate (its id names when it started, so enqueueing it again adds nothing). No
  // requirement: the slot that takes it routes it (a fitting build elsewhere, or a sentence saying none has one).
  const enqueue = async (job: JobRecord['job'], est: EstimateInternal) => {
    await ctx.queue.enqueue({
      id: `${estimateTaskId(job.id)}:${Date.parse(est.startedAt)}`,
      jobId: job.id,
      kind: 'render-chunk',
      payload: { estimate: true },
      ...taskScheduling(job),
    });
    ctx.events?.enqueued();
  };

  const start = ROUTES.startEstimate;
  app.post(start.path, { schema: { params: start.params, body: start.body } }, async (req, reply) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const cfg = req.body.requestedRenderConfig;
    const old = rec.internal.estimate;
    // The same request again: the same estimate (replayed even once the job has moved on).
    if (old && old.state !== 'canceled' && sameRequest(old.requestedConfig, cfg)) {
      // A crash between the record and its task below left it sampling
      // with no task: the repeat enqueues it (a no-op otherwise).
      if (old.state === 'sampling' && rec.job.status === 'validated' && !rec.internal.renderRequestedAt)
        await enqueue(rec.job, old);
      return reply
        .code(200)
        .header(IDEMPOTENT_REPLAY_HEADER, 'true')
        .send({ data: await present(rec, old) });
    }
    if (rec.job.status !== 'validated' || rec.internal.renderRequestedAt) throw notAllowed(rec);
    if (old?.state === 'sampling') throw new ApiError('ESTIMATE_IN_PROGRESS', { metadata: { jobId: rec.job.id } });
    const problems = checkAgainstAnalysis(rec, cfg);
    if (problems.length > 0) throw new ApiError('VALIDATION_ERROR', { details: problems });
    const est: EstimateInternal = { requestedConfig: cfg, state: 'sampling', startedAt: new Date(now()).toISOString() };
    // The record before its task: a slot that took the task first would find no estimate and drop it.
    const saved = await ctx.jobs.update(rec.job.id, {}, { estimate: est });
    await enqueue(rec.job, est);
    return reply.code(202).send({ data: await present(saved ?? rec, est) });
  });

  const get = ROUTES.getEstimate;
  app.get(get.path, { schema: { params: get.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const est = rec.internal.estimate;
    if (!est) throw new ApiError('ESTIMATE_NOT_FOUND', { metadata: { jobId: rec.job.id } });
    return { data: await present(rec, est) };
  });

  const cancel = ROUTES.cancelEstimate;
  app.delete(cancel.path, { schema: { params: cancel.params } }, async (req) => {
    const auth = requireAuth(req);
    const rec = await loadJob(ctx, auth.workspaceId, req.params.id);
    const est = rec.internal.estimate;
    if (!est) throw new ApiError('ESTIMATE_NOT_FOUND', { metadata: { jobId: rec.job.id } });
    // A failed one is set aside (canceled, its reason kept), so that the same request may be asked again;
    // a ready or canceled one is answered as it is (a repeat is harmless).
    if (est.state === 'failed') {
      const aside: EstimateInternal = { ...est, state: 'canceled' };
      return { data: await present((await ctx.jobs.update(rec.job.id, {}, { estimate: aside })) ?? rec, aside) };
    }
    if (est.state !== 'sampling') return { data: await present(rec, est) };
    const ended: EstimateInternal = { ...est, state: 'canceled', finishedAt: new Date(now()).toISOString() };
    const saved = await ctx.jobs.update(rec.job.id, {}, { estimate: ended });
    // A validated job's only tasks are its estimate's: dropping them stops the slot at its next heartbeat (lease lost).
    if (rec.job.status === 'validated' && !rec.internal.renderRequestedAt) await ctx.queue.cancelJob(rec.job.id);
    return { data: await present(saved ?? rec, ended) };
  });
};
