// Estimate benchmark (issue 28): six scenes whose cost changes along the timeline, each estimated
// through the real API (upload, create, validate, POST /jobs/{id}/estimate) and then rendered in
// full on the same farm in the same run (the reference service with one render slot, real
// Blender 3.4); the estimate is compared with the truth, beside Blendergrid's method (first,
// middle and last frame, time scaled linearly, no band) computed on the same samples. Targets:
//   - wall time: median error <= 10 %, worst <= 25 %, truth inside the band for >= 5 of 6 scenes;
//   - peak memory from the sample frames <= 15 %; from the analysis alone <= 30 % on >= 5 of 6;
//   - the estimate's own cost <= 10 % of the full render for jobs of 100+ frames, and under 60 s;
//   - the live ETA when 25 % of the frames are done: within 10 % of the real end.
// Not a test; `npm run bench:estimate` (run it through `flock /tmp/heavy-tests.lock` on a shared
// machine). BENCH_ESTIMATE_SCENES=name,name runs a subset.
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, markdownTable, verdict, writeResultsSection } from './lib/results.js';
import { buildScene, SCENES } from './lib/estimate-scenes.js';
import { runScene, type SceneRun } from './lib/estimate-run.js';
import { sceneErrors, sceneRows, verdicts } from './lib/estimate-report.js';
import { startRenderService } from './lib/render-jobs.js';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Each scene's rows and polls, for a reader who wants to see where an error came from. */
const DUMP = path.join(os.tmpdir(), 'rb-bench-estimate-runs');

async function main(): Promise<void> {
  const only = process.env.BENCH_ESTIMATE_SCENES?.split(',').filter(Boolean);
  const scenes = only ? SCENES.filter((s) => only.includes(s.name)) : SCENES;
  const files = new Map<string, string>();
  for (const s of scenes) files.set(s.name, await buildScene(s));
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const t0 = performance.now();
  // A price so that the cost figure exists (1 per hour: the cost reads as hours of CPU).
  const svc = await startRenderService({ slots: 1, config: { estimateRates: 'CPU=1' } });
  const runs: SceneRun[] = [];
  try {
    for (const s of scenes) {
      console.log(`\n== ${s.name}: ${s.frames} frames at ${s.width}x${s.height}, ${s.samples} samples`);
      const r = await runScene(svc.client, files.get(s.name)!, s);
      runs.push(r);
      await mkdir(DUMP, { recursive: true });
      await writeFile(path.join(DUMP, `${s.name}.json`), JSON.stringify(r, null, 1));
      const e = sceneErrors(r);
      console.log(
        `estimate ${r.estimate.figures!.wallSeconds.value} s ` +
          `[${r.estimate.figures!.wallSeconds.low}-${r.estimate.figures!.wallSeconds.high}] on ` +
          `frames ${r.estimate.sampleFrames.join(',')}; render ${r.renderWall.toFixed(1)} s; ` +
          `error ${(e.oursError * 100).toFixed(0)}%, Blendergrid ${(e.blendergridError * 100).toFixed(0)}%`,
      );
    }
  } finally {
    await svc.stop();
  }
  const minutes = (performance.now() - t0) / 60_000;
  const others = otherLoad();
  const errs = runs.map(sceneErrors);
  const tables = sceneRows(runs, errs);
  const v = verdicts(errs);
  for (const t of [tables.time, tables.parts, tables.memory, tables.cost, v.rows]) console.log(`\n${consoleTable(t)}`);
  const scenesMd = markdownTable(
    scenes.map((s) => ({
      scene: s.name,
      frames: String(s.frames),
      resolution: `${s.width}x${s.height}`,
      samples: String(s.samples),
      'along the timeline': s.what,
    })),
  );
  const body = `${machineMarkdown()}
${loadNote(busy, others)}
- The machine was shared with other work (tests and builds of other sessions; the bench ran under \`flock \
/tmp/heavy-tests.lock\`, which only keeps out the work that takes the same lock): frame times drift with that load, \
and the errors carry it.
- The whole run took ${minutes.toFixed(1)} minutes.

Farm: the reference service (\`dist/\`, in a child process, logging off) with one render slot, on a fresh data \
folder, Blender 3.4 (PATH), \`--estimate-rates CPU=1\`. For each scene, through the API: upload, create, validate \
(the analysis-only memory estimate is its \`vramMetadata\`), \`POST /jobs/{id}/estimate\` with the render's request, \
polled until \`ready\`; then \`POST /render\` with the same request (the sampled frames are kept, not rendered \
again), timed to the job's completion stamp. The truth is that render: its wall time (POST /render to \
\`completed\`), and the highest peak memory Blender reported for its own frames (the sampled ones excluded). The \
estimate's figure is \`wallSeconds\` (queue ahead, a scene load and warm-up unless every free slot holds the \
estimate's warm Blender, the frames left and their render calls' setups over the free slots). Blendergrid's \
method is computed on the same samples: the warm samples nearest the \
first, middle and last frame, their mean time times the frames left, plus the same measured load; its peak is the \
highest of those three frames. The live ETA is the job progress's \`etaBand\` at the first poll (every 200 ms) with \
a quarter of the frames done, against the time that really remained. Cost: the estimate's own Blender seconds \
(\`ownCost.renderSeconds\`) over the full render, and the estimate's wall (\`startedAt\` to \`finishedAt\`). **The \
full render** is the render's wall plus the seconds of the frames the estimate kept (their rows): the render skipped \
those frames, and without the estimate would have rendered them. Until 2026-12-06 the cost was over the render's \
wall alone; that figure stands beside it (\`own / render wall (old)\`). Since 2026-12-06 16:30Z the render takes \
over the estimate's warm Blender (\`estimateWarmKeepSeconds\`, 120 s): its scene load, and since 2026-12-06 20:15Z \
its warm-up (the lead's cold frames' excess), are billed to the job and taken off the estimate's own cost (read \
again after the render: \`load + warm-up taken over s\`); the load is added to the full render, which would have \
paid it (the warm-up is in the kept lead frames' rows already). The estimate reads the steps of animated \
integer properties from the analysis (\`animations[].fcurves[].steps\`: subdivision's and EEVEE's keyframed levels): \
its samples go to distinct segments between steps and its profile holds each segment flat (since 2026-12-06 13:20Z; \
before, a line was drawn across each step). The load line counts the bench's whole process tree as its own, sampled \
every 250 ms (\`bench/lib/process-tree.ts\`): its sandboxed Blenders, killed and reaped outside the tree, were \
counted as other programs before 2026-12-06.

${scenesMd}

Wall time and live ETA:

${markdownTable(tables.time)}

Where the time went (the estimate's one warm Blender; the render from POST /render: to its first frame's row, between \
its first and last rows, after the last to \`completed\`):

${markdownTable(tables.parts)}

Peak memory (MiB, as Blender reports it: Cycles' own peak on the CPU; EEVEE's is Blender's whole allocation):

${markdownTable(tables.memory)}

The estimate's own cost:

${markdownTable(tables.cost)}

Targets:

${markdownTable(v.rows)}
`;
  await writeResultsSection(
    'estimate',
    'Estimate: sample frames vs the full render, beside Blendergrid (npm run bench:estimate)',
    body,
  );
  console.log(`\nwrote bench/RESULTS.md; overall ${verdict(v.pass)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
