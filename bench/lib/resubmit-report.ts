// Tables, verdicts and the bench/RESULTS.md section of `npm run bench:resubmit`. Where the time
// of a submit goes is read from the proxy's request log: CLI start to its first request (Blender
// tracing the .blend, packing or hashing), the upload (first request to POST /jobs), validation
// (POST /jobs to POST /jobs/{id}/render: the worker unpacks or assembles the project and Blender
// analyses it; the client polls every second) and the render to the first frame. Through the
// daemon, the time before the first request splits into the daemon's pack (hashing, with its hash
// cache) and the add-on's poll noticing it is ready.
import type { RequestLogEntry } from './delay-proxy.js';
import { machineMarkdown } from './machine.js';
import type { Project } from './resubmit-project.js';
import type { StepResult } from './resubmit-step.js';
import { consoleTable, fmt, markdownTable, median, verdict, writeResultsSection, type Row } from './results.js';
import type { RttResult } from './rtt-probe.js';

export interface ModeResult {
  mode: string;
  extensions: string[];
  steps: StepResult[];
}

/** Appended to a mode's name for its steps made through the daemon (the add-on's path). */
export const DAEMON_SUFFIX = ', daemon';
/** Issue 30: one texture changed, through the daemon, to the first frame. */
const DAEMON_TARGET_S = 4.0;
const ADDON_POLL_TEXT = "0.5 s (the add-on's PACK_S)";

export interface ReportInput {
  /** Write the bench/RESULTS.md section (false: console only, for BENCH_LOOP). */
  write: boolean;
  project: Project;
  modes: ModeResult[];
  rtt: { proxied: RttResult; bare: RttResult };
  shaping: string;
  rateMbit: number;
  delayMs: number;
  dropMs: number;
  quick: boolean;
  load: string;
}

const MB = 1e6;
const QUICK_NOTE = "\n- **BENCH_QUICK=1: a small project, for development; not the benchmark's numbers**";
const mb = (b: number) => `${(b / MB).toFixed(b < 10 * MB ? 3 : 1)} MB`;
const s1 = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1));
const isManifest = (r: RequestLogEntry) => r.method === 'POST' && /\/uploads\/(blobs\/query|commit)$/.test(r.path);

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
function requestProfile(r: StepResult, delayMs: number): Row {
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
function shortError(e: string | null): string {
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

function stepRow(mode: string, r: StepResult): Row {
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

interface Check {
  target: string;
  value: string;
  pass: boolean;
}

/** Each target against one mode's steps: first, changed, unchanged, link down, link down + reset. */
function checks(m: ModeResult, project: Project): Check[] {
  const [first, changed, unchanged, ...drops] = m.steps;
  const manifest = changed ? changed.requests.filter(isManifest).reduce((n, q) => n + q.bytesUp, 0) : 0;
  const byteRatio = changed ? changed.wireBytes / (project.textureBytes + manifest) : NaN;
  const timeRatio = changed?.firstFrameS && first?.firstFrameS ? changed.firstFrameS / first.firstFrameS : NaN;
  const out: Check[] = [
    {
      target: 'one texture changed: wire <= 1.1 x (file + manifest)',
      value: changed
        ? `${byteRatio.toFixed(2)} (${mb(changed.wireBytes)} / (${mb(project.textureBytes)} + ${mb(manifest)}))`
        : '-',
      pass: changed?.ok === true && byteRatio <= 1.1,
    },
    {
      target: 'one texture changed: time <= 25% of the first submit',
      value: Number.isNaN(timeRatio)
        ? '-'
        : `${fmt.pct(timeRatio)} (${s1(changed!.firstFrameS)} / ${s1(first!.firstFrameS)} s)`,
      pass: changed?.ok === true && timeRatio <= 0.25,
    },
    {
      target: 'nothing changed: wire < 1 MB',
      value: unchanged ? mb(unchanged.wireBytes) : '-',
      pass: unchanged?.ok === true && unchanged.wireBytes < MB,
    },
  ];
  for (const d of drops) {
    const ratio = d.wireBytes / project.totalBytes;
    out.push({
      target: `${d.step}: completes by itself`,
      value: d.ok
        ? `yes, first frame after ${s1(d.firstFrameS)} s, ${d.retries ?? '?'} retries`
        : `no: ${shortError(d.error)}`,
      pass: d.ok,
    });
    out.push({
      target: `${d.step}: wire <= 1.2 x project`,
      value: `${ratio.toFixed(2)} (${mb(d.wireBytes)})`,
      pass: d.ok && ratio <= 1.2,
    });
  }
  return out;
}

/** One row per target, a value and verdict column per mode. */
function checkRows(modes: ModeResult[], project: Project): { rows: Row[]; pass: Map<string, boolean> } {
  const per = modes.map((m) => checks(m, project));
  const rows = per[0]!.map((c, i) => {
    const row: Row = { target: c.target };
    modes.forEach((m, j) => {
      const x = per[j]![i];
      row[m.mode] = x?.value ?? '-';
      row[`${m.mode} verdict`] = x ? verdict(x.pass) : '-';
    });
    return row;
  });
  return { rows, pass: new Map(modes.map((m, j) => [m.mode, per[j]!.every((c) => c.pass)])) };
}

/** The re-submit loop of each path side by side; the daemon's changed re-submit against the issue's 4.0 s. */
function loopRows(modes: ModeResult[]): { rows: Row[]; pass: boolean | null } {
  let pass: boolean | null = null;
  const rows = modes.map((m) => {
    const daemon = m.mode.endsWith(DAEMON_SUFFIX);
    const [first, changed, unchanged] = m.steps;
    const ok = changed?.ok === true && (changed.firstFrameS ?? Infinity) <= DAEMON_TARGET_S;
    if (daemon) pass = (pass ?? true) && ok;
    return {
      path: daemon ? `${m.mode.slice(0, -DAEMON_SUFFIX.length)}: daemon (add-on)` : `${m.mode}: CLI`,
      'first submit s': s1(first?.firstFrameS),
      'one texture changed s': s1(changed?.firstFrameS),
      'nothing changed s': s1(unchanged?.firstFrameS),
      [`one texture changed <= ${DAEMON_TARGET_S.toFixed(1)} s (daemon)`]: daemon ? verdict(ok) : '-',
    };
  });
  return { rows, pass };
}

export async function reportResubmit(input: ReportInput): Promise<void> {
  const { project, modes, rtt } = input;
  const rows = modes.flatMap((m) => m.steps.map((r) => stepRow(m.mode, r)));
  const profiles = modes.flatMap((m) => m.steps.map((r) => ({ mode: m.mode, ...requestProfile(r, input.delayMs) })));
  const v = checkRows(
    modes.filter((m) => !m.mode.endsWith(DAEMON_SUFFIX)),
    project,
  );
  const loop = loopRows(modes.filter((m) => m.mode === 'extension' || m.mode.endsWith(DAEMON_SUFFIX)));
  console.log(
    `\n${consoleTable(rows)}\n\n${consoleTable(profiles)}\n\n${consoleTable(v.rows)}\n\n${consoleTable(loop.rows)}`,
  );
  if (!input.write) {
    console.log('\nBENCH_LOOP=1: bench/RESULTS.md left as it was');
    return;
  }
  const drops = modes.flatMap((m) =>
    m.steps
      .slice(3)
      .map(
        (r) =>
          `- ${m.mode}, ${r.step}: ` +
          (r.drop
            ? `dropped after ${mb(r.drop.proxyBytes)} had passed the proxy` +
              (r.drop.resets ? `, ${r.drop.resets} connection(s) reset` : '')
            : 'did not happen (the upload ended first)'),
      ),
  );

  const body = `${machineMarkdown()}
${input.load}${input.quick ? QUICK_NOTE : ''}

**The link.** Two network namespaces (artist, farm) joined by a veth pair; tc \`htb\` at
${input.rateMbit} Mbit/s on both ends (egress each way):

\`\`\`
${input.shaping}
\`\`\`

This kernel has no \`netem\`, so the delay comes from a TCP proxy (bench/lib/delay-proxy.ts) in
the farm namespace that holds every chunk ${input.delayMs} ms in each direction and the first bytes of a
new connection one more round trip (the handshake); the artist reaches the service only through it
(the service's \`--public-url\` is the proxy, so upload URLs go through it too). Measured from the
artist namespace with a tiny TCP ping (1 byte, 30 round trips, to an echo server behind the same
proxy): RTT median **${rtt.proxied.medianMs.toFixed(1)} ms** (min ${rtt.proxied.minMs.toFixed(1)}, \
max ${rtt.proxied.maxMs.toFixed(1)}), connect to first echo
${rtt.proxied.firstEchoMs.toFixed(1)} ms; the bare link without the proxy: ${rtt.bare.medianMs.toFixed(2)} ms. TCP's \
own acknowledgements are not
delayed (the kernels send them), so the bulk rate is the shaped one; request/response exchanges
pay the full round trip.

**The project.** scene.blend (built in Blender by bench/lib/resubmit_scene.py: Cycles, 64x48, 4
samples, one frame, its material mixing every texture, so all are real dependencies) and
${project.textures.length} textures of ${mb(project.textureBytes)} random bytes each: ${mb(project.totalBytes)} in \
all. "One texture changed"
rewrites one of them with new random bytes.

**The sides.** The farm: \`renderbridge service\` (dist/, SQLite, local files, one embedded worker
slot with Blender 3.4) on a fresh temp data dir per mode, first with the content-addressed upload
extension, then restarted with \`RENDERBRIDGE_BLOB_UPLOADS=0\` (the spec's single PUT). GET
/extensions answered: ${modes.map((m) => `${m.mode}: [${m.extensions.join(', ') || 'none'}]`).join('; ')}. The artist: \
\`renderbridge submit
scene.blend --frames 1 --no-wait --no-download --json\` (the daemon's packer and submission code,
the shared client), its home folder (user config, the packer's caches) kept between the steps of
a mode, fresh for each link-drop step, which also uses a new workspace so no blob is held yet.
With the extension, the add-on's path too ("extension, daemon"): \`renderbridge daemon\` started once in
the artist namespace (its own home and workspace) and kept running across its three steps, as on an
artist's machine, and bench/lib/daemon-driver.ts making the add-on's calls (host-addon/renderbridge/session.py):
POST /packs with the dependencies the add-on's collector found (run once beforehand, untimed: inside the
artist's Blender it takes milliseconds), GET /packs/{id} every ${ADDON_POLL_TEXT} until ready, POST /submissions.
Its time starts at POST /packs; "pack" is until the daemon marked the pack ready (hashing, with the
daemon's hash cache), "add-on poll" until the add-on's POST /submissions.

**Measured.** Submit to first frame: from starting the CLI to GET /jobs/{id}/progress (polled
every 100 ms by the benchmark over a separate, unshaped control link) showing framesDone >= 1.
Bytes the artist sent: the artist veth's htb qdisc counter ("wire": every frame as sent, IP and
TCP headers of every segment; this is what the verdicts use), the veth's tx_bytes (\`ip -s link\`;
one header per GSO super-packet) and the TCP payload through the proxy, all from the CLI's start
to its exit. Both directions of every other process stay off the link. The link drops: once half
the project's bytes had passed the proxy, both veth ends were set down (\`ip link set DEV down\`,
routes gone) and came back up ${input.dropMs / 1000} s later; nobody intervened. Twice per mode: once with
nothing else (TCP rides out the gap by retransmitting, the connections carry on), once with the
proxy also resetting every connection it held when the link went down (the farm side forgets
them, as a NAT or a load balancer may; the resets are lost on the dead link, so the client meets
them when its next packet arrives: the upload must resume, and pooled keep-alive connections are
dead too).

${drops.join('\n')}

Both cores are shared by the CLI, Blender, the service, its worker and the proxy.

${markdownTable(rows)}

Requests of each step (from the proxy; "service after last PUT byte" is the time from an upload
request's last byte reaching the service to its answer, less the proxy's delay: hashing,
verification, writing):

${markdownTable(profiles)}

Targets (those of the extension; the single PUT is the baseline):

${markdownTable(v.rows)}

Re-submit to first frame, CLI and daemon (issue 30: one texture changed, through the daemon, within
${DAEMON_TARGET_S.toFixed(1)} s):

${markdownTable(loop.rows)}
`;
  await writeResultsSection(
    'resubmit',
    'Re-submit over a shaped link: content-addressed upload vs single PUT (npm run bench:resubmit)',
    body,
  );
  const daemonVerdict = loop.pass === null ? '' : `; daemon re-submit ${verdict(loop.pass)}`;
  console.log(
    `\nwrote bench/RESULTS.md; ${[...v.pass].map(([mode, ok]) => `${mode} ${verdict(ok)}`).join(', ')}${daemonVerdict}`,
  );
}
