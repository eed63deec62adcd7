// The rows of one submit step of `npm run bench:resubmit`. Where the time of a submit goes is read
// from the proxy's request log: CLI start to its first request (Blender tracing the .blend,
// packing or hashing), the upload (first request to POST /jobs), validation (POST /jobs to POST
// /jobs/{id}/render: the worker unpacks or assembles the project and Blender analyses it; the
// client polls every second) and the render to the first frame. Through the daemon, the time before
// the first request splits into the daemon's pack (hashing, with its hash cache) and the add-on's
// poll noticing it is ready.
import type { RequestLogEntry } from './delay-proxy.js';
import type { StepResult } from './resubmit-step.js';
import { median, type Row } from './results.js';

export const MB = 1e6;
export const mb = (b: number) => `${(b / MB).toFixed(b < 10 * MB ? 3 : 1)} MB`;
export const s1 = (x: number | null | undefined) =>
  x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1);
export const isManifest = (r: RequestLogEntry) =>
  r.method === 'POST' && /\/uploads\/(blobs\/query|commit)$/.test(r.path);

interface Phases {
  toFirstRequest: number | null;
  /** Through the daemon: POST /packs to the pack ready, then to the add-on's POST /submissions. */
  pack: number | null;
  addonPoll: number | null;
  upload: number | null;
  validate: number | null;
  render: number | null;
}

function phases(r: StepResult): Phases {
  // The daemon's tracker polls jobs of earlier steps now and then: its GETs of jobs are not the submit's.
  const submitted = r.marks?.submittedAt ?? null;
  const reqs = [...r.requests]
    .filter((q) => submitted === null || (q.at >= submitted && !(q.method === 'GET' && /\/jobs\b/.test(q.path))))
    .sort((a, b) => a.at - b.at);
  const first = reqs[0]?.at;
  const all = [...r.requests].sort((a, b) => a.at - b.at);
  const create = all.find((q) => q.method === 'POST' && /\/jobs$/.test(q.path))?.at;
  const render = all.find((q) => q.method === 'POST' && /\/jobs\/[^/]+\/render$/.test(q.path))?.at;
  const d = (a: number | undefined, b: number | undefined | null) =>
    a !== undefined && b !== undefined && b !== null ? (b - a) / 1000 : null;
  return {
    toFirstRequest: d(r.startedAt, first),
    pack: d(r.startedAt, r.marks?.packReadyAt),
    addonPoll: d(r.marks?.packReadyAt ?? undefined, r.marks?.submittedAt),
    upload: d(first, create),
    validate: d(create, render),
    render: d(render, r.firstFrameAt),
  };
}

/** What the requests of a step were: counts, bytes, the service's time after each upload's last byte. */
export function requestProfile(r: StepResult, delayMs: number): Row {
  const puts = r.requests.filter((q) => q.method === 'PUT');
  const tails = puts.filter((q) => q.responseAt !== null).map((q) => Math.max(0, q.responseAt! - q.lastUpAt - delayMs));
  const span = puts.length
    ? (Math.max(...puts.map((q) => q.responseAt ?? q.lastUpAt)) - Math.min(...puts.map((q) => q.at))) / 1000
    : 0;
  const putBytes = puts.reduce((n, q) => n + q.bytesUp, 0);
  const commit = r.requests.find((q) => q.method === 'POST' && q.path.endsWith('/uploads/commit'));
  const other = r.requests.length - puts.length;
  return {
    step: r.step,
    requests: `${r.requests.length} (${puts.length} PUT, ${other} other)`,
    'PUT bytes': mb(putBytes),
    'PUT rate': span > 0 ? `${((putBytes * 8) / span / 1e6).toFixed(0)} Mbit/s` : '-',
    'service after last PUT byte, median / max ms': tails.length
      ? `${median(tails).toFixed(0)} / ${Math.max(...tails).toFixed(0)}`
      : '-',
    'manifest requests': mb(r.requests.filter(isManifest).reduce((n, q) => n + q.bytesUp, 0)),
    'commit answered after ms': commit?.responseAt ? (commit.responseAt - commit.lastUpAt - delayMs).toFixed(0) : '-',
    'failed requests': String(
      r.requests.filter((q) => q.status !== null && q.status >= 400).length +
        r.requests.filter((q) => q.status === null).length,
    ),
  };
}

/** An error message without the service's origin and the generic advice: the request and the cause stay. */
export function shortError(e: string | null): string {
  return (e ?? '')
    .replace(/https?:\/\/[^/\s]+(\/api\/external\/v1)?/g, '')
    .replace(/: check the service URL.*$/, '')
    .slice(0, 140);
}

/**
 * The step's requests in order, runs of the same kind folded ("PUT /blobs/:id x62 @1.4-22.8 s"),
 * times from the CLI's start: for the console, to see what the client did when.
 */
export function requestSequence(r: StepResult): string {
  const kind = (q: RequestLogEntry) =>
    `${q.method} ${q.path
      .replace(/^\/api\/external\/v1/, '')
      .replace(/[^/]{20,}/g, ':id')
      .replace(/\/\d+$/, '/:n')}`;
  const runs: { kind: string; n: number; from: number; to: number }[] = [];
  for (const q of [...r.requests].sort((a, b) => a.at - b.at)) {
    const k = kind(q);
    const t = (q.at - r.startedAt) / 1000;
    const last = runs.at(-1);
    if (last?.kind === k) {
      last.n++;
      last.to = t;
    } else runs.push({ kind: k, n: 1, from: t, to: t });
  }
  return runs
    .map((x) => `${x.kind}${x.n > 1 ? ` x${x.n} @${x.from.toFixed(1)}-${x.to.toFixed(1)}` : ` @${x.from.toFixed(1)}`}`)
    .join(', ');
}

export function stepRow(mode: string, r: StepResult): Row {
  const p = phases(r);
  return {
    mode,
    step: r.step,
    result: r.ok ? 'ok' : `FAILED: ${shortError(r.error)}`,
    'submit to first frame s': s1(r.firstFrameS),
    'artist to farm, wire': mb(r.wireBytes),
    'veth tx': mb(r.vethBytes),
    'TCP payload': mb(r.payloadBytes),
    'upload mode': r.uploadMode ?? '?',
    retries: r.retries === null ? '?' : String(r.retries),
    'start to 1st request s': s1(p.toFirstRequest),
    'of which: pack / add-on poll s': r.marks ? `${s1(p.pack)} / ${s1(p.addonPoll)}` : '-',
    'upload s': s1(p.upload),
    'validate s': s1(p.validate),
    'render to 1st frame s': s1(p.render),
  };
}
