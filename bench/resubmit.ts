// Re-submit benchmark: the artist and the farm in two network namespaces joined by a veth pair
// shaped to 200 Mbit/s each way (tc htb) with 20 ms RTT added by a delaying TCP proxy, a project
// of a .blend and 20 incompressible 25 MB textures, submitted with `renderbridge submit` from
// the artist side: first submit, re-submit after changing one texture, re-submit with nothing
// changed, and a first submit with the link down for 5 s halfway through the upload (twice: the
// connections surviving, and reset by the farm side so the client must resume), once
// against the service with the content-addressed upload extension and once with it switched off
// (RENDERBRIDGE_BLOB_UPLOADS=0: the spec's single PUT), in the same run. Targets (extension):
// changed re-submit bytes <= 1.1 x (changed file + manifest) and time <= 25% of the first
// submit's; unchanged < 1 MB; with the drop the submit completes by itself and sends <= 1.2 x the
// project. With the extension, the same first / changed / unchanged steps also go through a
// `renderbridge daemon` kept running in the artist namespace, driven by the add-on's calls (its own
// workspace and home); target: one texture changed, first frame within 4.0 s. Needs root. Not a
// test; `npm run bench:resubmit` (BENCH_QUICK=1: 4 textures of 5 MB; BENCH_LOOP=1: only those
// re-submit steps, extension mode, printed and not written to bench/RESULTS.md).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { atExit, REPO_ROOT } from './lib/children.js';
import { collectDependencies, startArtistDaemon, submitThroughDaemon } from './lib/daemon-artist.js';
import { createKey, startProxy, startService, ECHO_PORT, PING_PORT, type Proxy } from './lib/farm.js';
import { loadNote, otherLoadMeter, quietCheck } from './lib/machine.js';
import { createNetns, type Netns } from './lib/netns.js';
import { buildProject, writeRandomFile, type Project } from './lib/resubmit-project.js';
import { reportResubmit } from './lib/resubmit-report.js';
import { DAEMON_SUFFIX, type ModeResult } from './lib/resubmit-checks.js';
import { requestSequence } from './lib/resubmit-step-rows.js';
import { runStep, type Drop, type StepResult, type Submitter } from './lib/resubmit-step.js';
import type { RttResult } from './lib/rtt-probe.js';

const QUICK = process.env.BENCH_QUICK === '1';
const TEXTURES = QUICK ? 4 : 20;
const TEXTURE_BYTES = (QUICK ? 5 : 25) * 1e6;
const RATE_MBIT = 200;
const DELAY_MS = 10;
const DROP_MS = 5000;
/** Only the re-submit loop (first, changed, unchanged; CLI and daemon), extension mode, not written to RESULTS.md. */
const LOOP = process.env.BENCH_LOOP === '1';

const MODES = [
  { name: 'extension', env: {}, daemon: true },
  { name: 'single PUT', env: { RENDERBRIDGE_BLOB_UPLOADS: '0' }, daemon: false },
] as const;

/** The tiny TCP ping from the artist namespace; `port` on the farm end of the link. */
function probeRtt(ns: Netns, port: number): RttResult {
  const [cmd, args] = ns.exec(ns.artist, process.execPath, [
    '--import',
    'tsx',
    path.join(REPO_ROOT, 'bench', 'lib', 'rtt-probe.ts'),
    ns.farmIp,
    String(port),
    '30',
  ]);
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`rtt probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as RttResult;
}

/** The four steps against one service (fresh data dir and artist home). */
async function runMode(
  ns: Netns,
  proxy: Proxy,
  project: Project,
  work: string,
  mode: (typeof MODES)[number],
): Promise<ModeResult[]> {
  const dir = path.join(work, mode.name.replace(/\W+/g, '-'));
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir, { recursive: true });
  // Keys before the service opens the database; the drop step gets a workspace of its own so
  // that it starts with no blobs held, like a first submit.
  const key = createKey(dataDir, 'bench');
  const dropKeys = [createKey(dataDir, 'bench-drop'), createKey(dataDir, 'bench-drop-reset')];
  const daemonKey = createKey(dataDir, 'bench-daemon');
  const service = await startService(ns, dataDir, mode.env, path.join(dir, 'service.log'), key);
  console.log(`\n== ${mode.name}: service offers [${service.extensions.join(', ') || 'no extensions'}]`);
  let steps: StepResult[] = [];
  const step = async (name: string, home: string, apiKey: string, drop?: Drop, submit?: Submitter) => {
    spawnSync('sync');
    await mkdir(home, { recursive: true });
    console.log(`-- ${mode.name}${submit ? DAEMON_SUFFIX : ''}: ${name}`);
    const r = await runStep(
      ns,
      proxy,
      service,
      name,
      { blend: project.blend, home, apiKey, serviceOrigin: service.artistOrigin },
      drop,
      submit,
    );
    console.log(
      r.ok
        ? `   first frame after ${r.firstFrameS!.toFixed(1)} s, ${(r.wireBytes / 1e6).toFixed(1)} MB on the link`
        : `   FAILED: ${r.error}`,
    );
    console.log(`   requests (s from the CLI's start): ${requestSequence(r)}`);
    steps.push(r);
  };
  const results: ModeResult[] = [];
  const changed = project.textures[Math.floor(project.textures.length / 2)]!;
  try {
    const home = path.join(dir, 'home');
    await step('first submit', home, key);
    await writeRandomFile(changed, project.textureBytes);
    await step('one texture changed', home, key);
    await step('nothing changed', home, key);
    if (mode.daemon) {
      const cliSteps = steps;
      steps = [];
      const daemonHome = path.join(dir, 'home-daemon');
      const daemon = await startArtistDaemon(ns, {
        home: daemonHome,
        apiKey: daemonKey,
        serviceOrigin: service.artistOrigin,
      });
      try {
        const deps = await collectDependencies(project.blend);
        const viaDaemon: Submitter = (i) => submitThroughDaemon(ns, daemon, i.blend, deps);
        await step('first submit', daemonHome, daemonKey, undefined, viaDaemon);
        await writeRandomFile(changed, project.textureBytes);
        await step('one texture changed', daemonHome, daemonKey, undefined, viaDaemon);
        await step('nothing changed', daemonHome, daemonKey, undefined, viaDaemon);
      } finally {
        await daemon.stop();
      }
      results.push({ mode: `${mode.name}${DAEMON_SUFFIX}`, extensions: service.extensions, steps });
      steps = cliSteps;
    }
    if (LOOP) return [{ mode: mode.name, extensions: service.extensions, steps }, ...results];
    const half = project.totalBytes / 2;
    await step(`link down ${DROP_MS / 1000} s mid-upload`, path.join(dir, 'home-drop'), dropKeys[0]!, {
      afterBytes: half,
      ms: DROP_MS,
      reset: false,
    });
    await step(`link down ${DROP_MS / 1000} s + connections reset`, path.join(dir, 'home-drop-reset'), dropKeys[1]!, {
      afterBytes: half,
      ms: DROP_MS,
      reset: true,
    });
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  return [{ mode: mode.name, extensions: service.extensions, steps }, ...results];
}

async function main(): Promise<void> {
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const work = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-resubmit-'));
  // BENCH_KEEP=1 keeps the work folder (service logs) for a look afterwards.
  if (process.env.BENCH_KEEP !== '1') atExit(() => rmSync(work, { recursive: true, force: true }));
  else console.log(`work folder (kept): ${work}`);
  console.log(`building the project: scene.blend and ${TEXTURES} textures of ${TEXTURE_BYTES / 1e6} MB`);
  const project = await buildProject(path.join(work, 'project'), { textures: TEXTURES, textureBytes: TEXTURE_BYTES });
  const ns = createNetns({ rateMbit: RATE_MBIT });
  const proxy = await startProxy(ns, DELAY_MS);
  const rtt = { proxied: probeRtt(ns, PING_PORT), bare: probeRtt(ns, ECHO_PORT) };
  console.log(
    `RTT through the proxy: median ${rtt.proxied.medianMs.toFixed(1)} ms; bare link ${rtt.bare.medianMs.toFixed(2)} ms`,
  );
  const modes: ModeResult[] = [];
  try {
    for (const mode of LOOP ? MODES.slice(0, 1) : MODES) modes.push(...(await runMode(ns, proxy, project, work, mode)));
  } finally {
    await proxy.stop();
  }
  const others = otherLoad();
  await reportResubmit({
    write: !LOOP,
    project,
    modes,
    rtt,
    shaping: ns.describeShaping(),
    rateMbit: RATE_MBIT,
    delayMs: DELAY_MS,
    dropMs: DROP_MS,
    quick: QUICK,
    load: loadNote(busy, others),
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
