// Pack benchmark: the daemon's packer (packFolder) against Info-ZIP `zip -r -6` of the same
// generated project folder, in the same run, plus the RSS growth of the process that packs.
// Targets: at least as fast as `zip -r -6`, RSS growth < 100 MB. Not a test; `npm run bench:pack`
// (BENCH_PACK_MB, BENCH_ROUNDS change the size and rounds; BENCH_NOTE adds a line to the results).
// The packer runs in a child process (lib/pack-child.ts) so its RSS is its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { atExit, cpuTimes, REPO_ROOT, rssBytes, track } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, fmt, markdownTable, median, verdict, writeResultsSection, type Row } from './lib/results.js';
import type { ChildAnswer, ChildRequest } from './lib/pack-child.js';
import { generate, warm } from './lib/pack-project-gen.js';

const TOTAL = Number(process.env.BENCH_PACK_MB ?? 1024) * 1024 * 1024;
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET_RSS = 100e6;
const MB = 1e6;

/** CPU seconds of this process's reaped children (Linux /proc; USER_HZ 100). */
function childCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100;
}

async function runZip(dir: string, out: string): Promise<{ seconds: number; cpu: number }> {
  const cpu0 = childCpu();
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const p = track(spawn('zip', ['-r', '-6', '-q', out, '.'], { cwd: dir, stdio: 'inherit' }));
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`zip exited with ${code}`))));
  });
  return { seconds: (performance.now() - t0) / 1000, cpu: childCpu() - cpu0 };
}

async function startPacker(): Promise<{ proc: ChildProcess; ask: (req: ChildRequest) => Promise<ChildAnswer> }> {
  const proc = track(
    spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./lib/pack-child.ts', import.meta.url))], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    proc.once('message', () => resolve());
    proc.once('exit', (code) => reject(new Error(`packer child exited (${code}) before it was ready`)));
  });
  const ask = (req: ChildRequest) =>
    new Promise<ChildAnswer>((resolve, reject) => {
      proc.once('message', (m) => resolve(m as ChildAnswer));
      proc.once('exit', (code) => reject(new Error(`packer child exited (${code})`)));
      proc.send(req);
    });
  return { proc, ask };
}

async function main(): Promise<void> {
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const work = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-pack-'));
  atExit(() => rmSync(work, { recursive: true, force: true }));
  const dir = path.join(work, 'project');
  console.log(`generating ${fmt.mib(TOTAL)} of project files in ${dir}`);
  const files = await generate(dir, TOTAL);
  await warm(dir);
  const packer = await startPacker();
  const pid = packer.proc.pid!;
  const sync = () => spawnSync('sync', { stdio: 'inherit' });
  const rows: Row[] = [];
  const seconds: Record<string, number[]> = { zip: [], packer: [] };
  const sizes: Record<string, number> = {};
  const growth: number[] = [];
  const record = (round: number, tool: string, s: number, bytes: number, extra: Row) => {
    seconds[tool]!.push(s);
    sizes[tool] = bytes;
    rows.push({
      round: String(round),
      tool,
      seconds: s.toFixed(2),
      'MB/s': fmt.mbps(TOTAL / MB / s),
      'zip size': fmt.mib(bytes),
      'of input': fmt.pct(bytes / TOTAL),
      ...extra,
    });
    console.log(consoleTable([rows.at(-1)!]));
  };
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which tool goes first, so drift (page cache, writeback, other load) hits both alike.
      const order = round % 2 ? ['zip', 'packer'] : ['packer', 'zip'];
      for (const tool of order) {
        const out = path.join(work, `${tool}-${round}.zip`);
        sync();
        if (tool === 'zip') {
          const r = await runZip(dir, out);
          record(round, 'zip', r.seconds, (await stat(out)).size, { 'CPU s': r.cpu.toFixed(2) });
        } else {
          const before = rssBytes(pid);
          let peak = before;
          const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
          const cpu0 = cpuTimes(pid);
          const answer = await packer.ask({ dir, zipPath: out }).finally(() => clearInterval(sampler));
          peak = Math.max(peak, rssBytes(pid));
          const cpu = cpuTimes(pid);
          growth.push(peak - before);
          if (answer.fileCount !== files) throw new Error(`packer packed ${answer.fileCount} files, expected ${files}`);
          if (round === 1 && spawnSync('unzip', ['-tqq', out], { stdio: 'inherit' }).status !== 0)
            throw new Error('unzip -t found errors in the packer zip');
          record(round, 'packer', answer.seconds, answer.bytes, {
            'CPU s': (cpu.user - cpu0.user + cpu.sys - cpu0.sys).toFixed(2),
            'RSS growth':
              `${(growth.at(-1)! / MB).toFixed(1)} MB (${(before / MB).toFixed(0)} ` +
              `-> ${(peak / MB).toFixed(0)} MB)`,
          });
        }
        await rm(out);
      }
    }
  } finally {
    // Reaped before measuring the other load, so that its CPU time counts as this benchmark's.
    const exited = new Promise((resolve) => packer.proc.once('exit', resolve));
    packer.proc.disconnect();
    await exited;
  }
  const others = otherLoad();
  const zipS = median(seconds.zip!);
  const packS = median(seconds.packer!);
  const speed = zipS / packS;
  const maxGrowth = Math.max(...growth);
  const summary: Row[] = [
    {
      'zip -r -6': `${zipS.toFixed(2)} s (${fmt.mbps(TOTAL / MB / zipS)})`,
      packer: `${packS.toFixed(2)} s (${fmt.mbps(TOTAL / MB / packS)})`,
      'zip time / packer time': `${speed.toFixed(2)}x`,
      '>= 1x': verdict(speed >= 1),
      'zip size / packer size': `${fmt.mib(sizes.zip!)} / ${fmt.mib(sizes.packer!)}`,
      'max RSS growth': `${(maxGrowth / MB).toFixed(1)} MB`,
      '< 100 MB': verdict(maxGrowth < TARGET_RSS),
    },
  ];
  console.log(`\n${consoleTable(rows)}\n\n${consoleTable(summary)}`);
  const note = process.env.BENCH_NOTE ? `\n- Note: ${process.env.BENCH_NOTE}` : '';
  const body = `${machineMarkdown()}
${loadNote(busy, others)}${note}

Setup: a generated project of ${fmt.mib(TOTAL)} in ${files} files in a temp folder (${os.tmpdir()}): half
compressible (a 1/8 share each of a .blend-like file of interleaved binary and text blocks, four
.obj-like text files, two binary mesh caches of int32 indices and smooth float32 positions, and
1024 small text files), half random bytes in 48 \`.png\` and 8 \`.exr\` files. Every file is read
once after generation so both tools start from a warm page cache. ${ROUNDS} rounds; each runs
\`zip -r -6 -q OUT .\` (Info-ZIP 3.0) in the project folder and the packer (\`packFolder\`, zlib
level 6, in a child process that stays up across rounds, archiver already loaded) on the same
folder, alternating which goes first; \`sync\` runs (untimed) before each, and the zips are deleted
after. The packer stores the images (known extensions, and samples that do not shrink) and
deflates the rest, hashing every file with SHA-256 for its manifest; zip deflates everything it
can (it stores an entry only after deflating it failed to shrink it). Times are wall clock; summary
numbers are the **median** of the rounds. RSS is the packer child's VmRSS sampled every 50 ms
during its run; growth is the peak minus the value just before (MB = 10^6 B, MiB = 2^20 B).
The packer's first zip is checked with \`unzip -t\` (untimed).

${markdownTable(rows)}

Summary (medians):

${markdownTable(summary)}
`;
  await writeResultsSection('pack', 'Pack: packer vs zip -r -6 (npm run bench:pack)', body);
  console.log(`\nwrote bench/RESULTS.md; overall ${verdict(speed >= 1 && maxGrowth < TARGET_RSS)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
