// The tables and the bench/RESULTS.md section of `npm run bench:resubmit`: each step's rows
// (resubmit-step-rows.ts) and the verdicts (resubmit-checks.ts), with how the link, the project
// and the two sides were set up.
import { machineMarkdown } from './machine.js';
import type { Project } from './resubmit-project.js';
import { checkRows, DAEMON_SUFFIX, DAEMON_TARGET_S, loopRows, type ModeResult } from './resubmit-checks.js';
import { mb, requestProfile, stepRow } from './resubmit-step-rows.js';
import { consoleTable, markdownTable, verdict, writeResultsSection } from './results.js';
import type { RttResult } from './rtt-probe.js';

const ADDON_POLL_TEXT = "0.5 s (the add-on's PACK_S)";
const QUICK_NOTE = "\n- **BENCH_QUICK=1: a small project, for development; not the benchmark's numbers**";

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
