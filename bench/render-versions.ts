// Render benchmark, second part (`npm run bench:render` runs it after bench/render.ts; alone:
// `npm run bench:render:versions`). Not a test.
//   1. Blender 4.3 and 5.2 (the Debian roots of scripts/blender-roots.sh, started in bubblewrap as
//      the service starts them): the small job (<= 1.03x) and the subdivision scene (<= 1.05x),
//      each against bare `blender -a` of the same build, started the same way, in the same run;
//   2. the service as a user starts it: `renderbridge service` with its default settings and
//      logging (pretty lines, read as a terminal reads them), on the subdivision scene against bare
//      `blender -a` (<= 1.05x), beside the same service with `--log-level silent`;
//   3. the sandbox: the service with Blender sandboxed against the same with --no-sandbox
//      (<= 1.01x), on PATH's 3.4 and on the newest root.
// BENCH_ROUNDS (default 9) rounds of the subdivision runs, BENCH_SMALL_ROUNDS (default 31) of the
// small job; BENCH_ONLY=versions, BENCH_ONLY=cli or BENCH_ONLY=sandbox runs one part, BENCH_BUILDS
// and BENCH_SCENES narrow the versions part.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildFixture } from '../test/helpers/fixtures.js';
import { REPO_ROOT } from './lib/children.js';
import { startCliService } from './lib/render-cli-service.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, markdownTable, verdict, writeResultsSection } from './lib/results.js';
import { serviceVsBare } from './lib/render-scenarios.js';
import { stepper, type Outcome, type Scene } from './lib/render-scenario-kit.js';
import { sandboxOverhead } from './lib/render-sandbox.js';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 9));
/**
 * As bench/render.ts: one small-job round's ratio spreads several percent, and 31 rounds narrow the median to about 2%.
 */
const SMALL_ROUNDS = Math.max(1, Number(process.env.BENCH_SMALL_ROUNDS ?? 31));
/** BENCH_BUILDS=4.3 (comma-separated minors): only those roots in the versions part. Default both. */
const BUILDS = process.env.BENCH_BUILDS?.split(',').map((b) => b.trim());
/** BENCH_SCENES=small or subdivision: only that scene in the versions part. Default both. */
const SCENES = process.env.BENCH_SCENES;
const ONLY = process.env.BENCH_ONLY;

function roots(): { minor: string; path: string }[] {
  const folders = execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'blender-roots.sh'), '--print'], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n');
  const out = [
    { minor: '4.3', path: folders[0]! },
    { minor: '5.2', path: folders[1]! },
  ];
  for (const r of out) {
    if (!existsSync(path.join(r.path, '.renderbridge-root')))
      throw new Error(`the Blender ${r.minor} root ${r.path} is not built: run bash scripts/blender-roots.sh`);
  }
  return out;
}

async function main(): Promise<void> {
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const outcomes: Outcome[] = [];
  const step = stepper(outcomes);
  if (!ONLY || ONLY === 'versions') {
    for (const r of roots().filter((b) => !BUILDS || BUILDS.includes(b.minor))) {
      // Each build renders a scene it saved itself.
      const small: Scene = {
        file: await buildFixture('basic', { blender: r.path }),
        frames: 24,
        width: 160,
        height: 90,
        samples: 4,
        build: r.path,
      };
      const subdivision: Scene = {
        file: await buildFixture('monkeys', { blender: r.path }),
        frames: 120,
        width: 160,
        height: 120,
        samples: 16,
        build: r.path,
      };
      if (SCENES !== 'subdivision')
        await step(`small job, Blender ${r.minor}`, () =>
          serviceVsBare(`small job ${r.minor}`, small, SMALL_ROUNDS, 1.03),
        );
      if (SCENES !== 'small')
        await step(`subdivision scene, Blender ${r.minor}`, () =>
          serviceVsBare(`subdivision ${r.minor}`, subdivision, ROUNDS, 1.05),
        );
    }
  }
  if (!ONLY || ONLY === 'cli') {
    const subdivision: Scene = {
      file: await buildFixture('monkeys'),
      frames: 120,
      width: 160,
      height: 120,
      samples: 16,
    };
    let lines = 0;
    await step('renderbridge service, default logging', async () => {
      const o = await serviceVsBare(
        'subdivision, renderbridge service',
        subdivision,
        ROUNDS,
        1.05,
        undefined,
        async () => {
          const svc = await startCliService();
          const stop = svc.stop;
          return { ...svc, stop: async () => ((lines = svc.lines()), await stop()) };
        },
      );
      return { ...o, verdicts: o.verdicts.map((v) => ({ ...v, 'log lines': String(lines) })) };
    });
    await step('renderbridge service, --log-level silent', () =>
      serviceVsBare('subdivision, renderbridge service silent', subdivision, ROUNDS, 1.05, undefined, () =>
        startCliService({ args: ['--log-level', 'silent'] }),
      ),
    );
  }
  if (!ONLY || ONLY === 'sandbox') {
    // PATH's build (3.4) and the newest root: the sandbox binds a
    // system folder for the one and a whole root for the other.
    const latest = roots().at(-1)!;
    const here: Scene = { file: await buildFixture('monkeys'), frames: 120, width: 160, height: 120, samples: 16 };
    const there: Scene = {
      file: await buildFixture('monkeys', { blender: latest.path }),
      frames: 120,
      width: 160,
      height: 120,
      samples: 16,
      build: latest.path,
    };
    await step('sandbox overhead, Blender 3.4', () => sandboxOverhead('subdivision 3.4, sandbox', here, ROUNDS, 1.01));
    await step(`sandbox overhead, Blender ${latest.minor}`, () =>
      sandboxOverhead(`subdivision ${latest.minor}, sandbox`, there, ROUNDS, 1.01),
    );
  }
  const others = otherLoad();
  const rows = outcomes.flatMap((o) => o.rows);
  const verdicts = outcomes.flatMap((o) => o.verdicts);
  const pass = outcomes.every((o) => o.pass);
  const body = `${machineMarkdown()}
${loadNote(busy, others)}

Each newer build renders a scene it saved itself (the \`basic\` and \`monkeys\` fixtures built by that
Blender). Bare: that build's \`blender -b -Y FILE --python-expr <the service's settings> -o DIR/f_#### -F PNG -s 1
-e N -a\`, started as the service starts the build (a Debian root inside bubblewrap, the output folder bound
in). Service: the bench's service child (logging off, one slot) with only that build (\`--blender ROOT
--no-blender-from-path\`). "renderbridge service": \`node bin/renderbridge.js service --data-dir D --host 127.0.0.1
--port P\` with every default (slots, logging at info, pretty lines as on a terminal, read as they come),
then the same with \`--log-level silent\`. Sandbox: the bench's service child with Blender in the sandbox
against the same child started with \`--no-sandbox\`, alternating, on PATH's 3.4 and on the newest root. \
Timing, rounds and verdicts as in the first part: the median of the
rounds' paired ratios (${SMALL_ROUNDS} small-job rounds, ${ROUNDS} subdivision rounds). The service's Blenders run
in the sandbox, in a PID namespace of their own: their CPU is not rolled up into the service's reaped children
("Blender CPU s" near 0 for the service) and shows as "other load" instead; the walls are unaffected.

${markdownTable(rows)}

${markdownTable(verdicts)}
`;
  // A narrowed run keeps its own section: it must not replace the whole run's figures.
  const narrowed = [BUILDS?.join('+'), SCENES].filter(Boolean).join('-');
  const section = `${ONLY ? `render-${ONLY}` : 'render-versions'}${narrowed ? `-${narrowed}` : ''}`;
  await writeResultsSection(
    section,
    narrowed
      ? `Render: Blender ${narrowed} rerun alone (npm run bench:render:versions)`
      : ONLY === 'cli'
        ? 'Render: the service as a user starts it (npm run bench:render)'
        : ONLY === 'sandbox'
          ? "Render: the sandbox's overhead (npm run bench:render)"
          : 'Render: Blender 4.3 and 5.2, and the service as a user starts it (npm run bench:render)',
    body,
  );
  console.log(`\n${consoleTable(verdicts)}\n\nwrote bench/RESULTS.md; overall ${verdict(pass)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
