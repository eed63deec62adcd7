// One step of `npm run bench:resubmit`: a submit from the artist namespace, timed to the job's
// first frame, with the bytes the artist sent on the link and, where asked, the link dropped in
// the middle of the upload. The job is then left to complete so the next step starts on a
// quiet farm.
import { submitFromArtist, type SubmitInput, type SubmitOutcome } from './artist.js';
import type { RequestLogEntry } from './delay-proxy.js';
import type { Proxy, Service } from './farm.js';
import type { Netns } from './netns.js';

export interface Drop {
  /** Artist-to-farm bytes through the proxy (since the step began) at which the link drops. */
  afterBytes: number;
  /** How long the link stays down. */
  ms: number;
  /**
   * Also reset every connection the proxy holds when the link goes down: the farm side forgets
   * them (as a NAT or a load balancer may), so nothing open survives and the client must resume.
   * Without it TCP rides out the gap (retransmissions) and the same connections carry on.
   */
  reset: boolean;
}

export interface StepResult {
  step: string;
  /** The CLI exited 0 and the job reached its first frame. */
  ok: boolean;
  error: string | null;
  /** From starting `renderbridge submit` to GET /jobs/{id}/progress showing framesDone >= 1. */
  firstFrameS: number | null;
  /** Artist to farm: bytes the artist end's qdisc sent (wire bytes, all headers). */
  wireBytes: number;
  /** Artist to farm: the artist veth's tx_bytes. */
  vethBytes: number;
  /** Artist to farm: TCP payload through the proxy. */
  payloadBytes: number;
  uploadMode: string | null;
  retries: number | null;
  bytesSkipped: number | null;
  requests: RequestLogEntry[];
  startedAt: number;
  firstFrameAt: number | null;
  drop: { at: number; resets: number; proxyBytes: number } | null;
  /** Through the daemon: when its pack turned ready and when the add-on asked for the submission (epoch ms). */
  marks?: { packReadyAt: number | null; submittedAt: number | null };
}

/** Starts one submit (the CLI by default; the add-on's calls to a daemon in the daemon leg). */
export type Submitter = (input: SubmitInput) => {
  done: Promise<SubmitOutcome & { marks?: StepResult['marks'] }>;
  exited: () => boolean;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowMs = (): number => performance.timeOrigin + performance.now();

async function getJson<T>(url: string, key: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Polls the job's progress every 100 ms over the control link until a frame is done; epoch ms. */
async function waitFirstFrame(service: Service, key: string, jobId: string, deadlineMs: number): Promise<number> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const { data } = await getJson<{ data: { status: string; framesDone: number | null } }>(
      `${service.controlApi}/jobs/${jobId}/progress`,
      key,
    );
    if ((data.framesDone ?? 0) >= 1 || data.status === 'completed') return nowMs();
    if (data.status === 'failed' || data.status === 'canceled') {
      const job = await getJson<{ data: { failedReason?: unknown } }>(`${service.controlApi}/jobs/${jobId}`, key);
      throw new Error(`job ${jobId} ${data.status}: ${JSON.stringify(job.data.failedReason ?? null)}`);
    }
    await sleep(100);
  }
  throw new Error(`job ${jobId} rendered no frame within ${deadlineMs / 1000} s`);
}

/** Waits (untimed) until the job is completed, failed or canceled, so the worker is free again. */
export async function waitJobSettled(service: Service, key: string, jobId: string): Promise<string> {
  const end = Date.now() + 10 * 60_000;
  while (Date.now() < end) {
    const { data } = await getJson<{ data: { status: string } }>(`${service.controlApi}/jobs/${jobId}`, key);
    if (['completed', 'failed', 'canceled'].includes(data.status)) return data.status;
    await sleep(250);
  }
  throw new Error(`job ${jobId} did not settle within 10 minutes`);
}

/** Runs one submit; never throws for a failed submit (the result says so), only for a broken setup. */
export async function runStep(
  ns: Netns,
  proxy: Proxy,
  service: Service,
  step: string,
  input: SubmitInput,
  drop?: Drop,
  submit: Submitter = (i) => submitFromArtist(ns, i),
): Promise<StepResult> {
  const c0 = ns.counters();
  const p0 = await proxy.counts();
  const run = submit(input);
  let dropped: StepResult['drop'] = null;
  if (drop) {
    // Watch the proxy's count; drop once about half of the project went through.
    while (!run.exited()) {
      const p = await proxy.counts();
      if (p.up - p0.up >= drop.afterBytes) {
        ns.setLink(false);
        // The resets go out while the link is down, so they are lost: the client learns of them
        // from the RST its next packet meets once the link is back.
        const resets = drop.reset ? await proxy.resetAll() : 0;
        dropped = { at: nowMs(), resets, proxyBytes: p.up - p0.up };
        await sleep(drop.ms);
        ns.setLink(true);
        break;
      }
      await sleep(50);
    }
  }
  const out = await run.done;
  const c1 = ns.counters();
  const p1 = await proxy.counts();
  const s = out.result?.submission;
  const base = {
    step,
    wireBytes: c1.wireBytes - c0.wireBytes,
    vethBytes: c1.vethTxBytes - c0.vethTxBytes,
    payloadBytes: p1.up - p0.up,
    uploadMode: s?.upload?.mode ?? null,
    retries: s?.upload?.retries ?? null,
    bytesSkipped: s?.upload?.bytesSkipped ?? null,
    startedAt: out.startedAt,
    drop: dropped,
    ...(out.marks ? { marks: out.marks } : {}),
  };
  const requests = async () => (await proxy.requests()).filter((r) => r.at >= out.startedAt);
  if (out.code !== 0 || !s?.jobId) {
    const why = s?.error
      ? `${s.error.name}: ${s.error.message}`
      : `exit ${out.code}: ${out.stderrTail.trim().split('\n').slice(-3).join(' / ')}`;
    return { ...base, ok: false, error: why, firstFrameS: null, firstFrameAt: null, requests: await requests() };
  }
  try {
    const firstFrameAt = await waitFirstFrame(service, input.apiKey, s.jobId, 10 * 60_000);
    await waitJobSettled(service, input.apiKey, s.jobId);
    return {
      ...base,
      ok: true,
      error: null,
      firstFrameS: (firstFrameAt - out.startedAt) / 1000,
      firstFrameAt,
      requests: await requests(),
    };
  } catch (err) {
    return {
      ...base,
      ok: false,
      error: String(err),
      firstFrameS: null,
      firstFrameAt: null,
      requests: await requests(),
    };
  }
}
