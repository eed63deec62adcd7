// Pack benchmark: the daemon's packer (packFolder) against Info-ZIP `zip -r -6` of the same
// generated project folder, in the same run, plus the RSS growth of the process that packs.
// Targets: at least as fast as `zip -r -6`, RSS growth < 100 MB. Not a test; `npm run bench:pack`
// (BENCH_PACK_MB, BENCH_ROUNDS change the size and rounds; BENCH_NOTE adds a line to the results).
// The packer runs in a child process (this file with --child) so its RSS is its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { createReadStream, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { atExit, cpuTimes, REPO_ROOT, rssBytes, track } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, fmt, markdownTable, median, verdict, writeResultsSection, type Row } from './lib/results.js';

const TOTAL = Number(process.env.BENCH_PACK_MB ?? 1024) * 1024 * 1024;
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET_RSS = 100e6;
const MiB = 1024 * 1024;
const MB = 1e6;

interface ChildRequest {
  dir: string;
  zipPath: string;
}
interface ChildAnswer {
  seconds: number;
  bytes: number;
  fileCount: number;
}

/** Child mode: waits for folders to pack, packs each with packFolder, answers the time it took. */
async function child(): Promise<void> {
  const { packFolder } = await import('../daemon/pack/pack-project.js');
  const archiver: string = 'archiver'; // a variable keeps tsc from looking for declarations archiver lacks
  await import(archiver); // loaded before the baseline, as in a daemon that has packed before
  process.on('message', (req: ChildRequest) => {
    const t0 = performance.now();
    packFolder(req.dir, { zipPath: req.zipPath, createdBy: 'bench' }).then(
      (out) =>
        process.send!({
          seconds: (performance.now() - t0) / 1000,
          bytes: out.bytes,
          fileCount: out.fileCount,
        } satisfies ChildAnswer),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
  process.once('disconnect', () => process.exit(0));
  process.send!('ready');
}

/** Deterministic-enough text like an .obj export: one block per seed, 1 MiB. */
function textBlock(seed: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MiB; i++) {
    const r = Math.random;
    const line =
      i % 5 === 4
        ? `f ${i} ${i + 1} ${i + 2 + seed}\n`
        : `v ${(r() * 20 - 10).toFixed(6)} ${(r() * 20 - 10).toFixed(6)} ${(r() * 4).toFixed(6)}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join('')).subarray(0, MiB);
}

/** Binary mesh-like data: sequential int32 indices and smooth float32 positions (compresses, but less than text). */
function meshBlock(seed: number): Buffer {
  const buf = Buffer.alloc(MiB);
  for (let i = 0; i < MiB / 16; i++) {
    buf.writeInt32LE(i * 3 + seed, i * 16);
    buf.writeFloatLE(Math.sin(i / 500 + seed) * 4, i * 16 + 4);
    buf.writeFloatLE(Math.cos(i / 700) * 4, i * 16 + 8);
    buf.writeFloatLE(Math.round(Math.random() * 64) / 64, i * 16 + 12);
  }
  return buf;
}

/** Writes `size` bytes to `file` from `next()` blocks. */
async function writeBlocks(file: string, size: number, next: (i: number) => Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const fh = await open(file, 'wx');
  try {
    for (let done = 0, i = 0; done < size; i++) {
      const b = next(i);
      const chunk = b.subarray(0, Math.min(b.length, size - done));
      await fh.write(chunk);
      done += chunk.length;
    }
  } finally {
    await fh.close();
  }
}

/**
 * Half compressible (a .blend-like file, .obj text, binary mesh caches, many small text files),
 * half incompressible (random bytes named .png and .exr). Returns the file count.
 */
async function generate(dir: string, total: number): Promise<number> {
  const half = total / 2;
  const texts = Array.from({ length: 8 }, (_, i) => textBlock(i));
  const meshes = Array.from({ length: 4 }, (_, i) => meshBlock(i));
  const pick = <T>(xs: T[], i: number): T => xs[(i * 7 + 3) % xs.length]!;
  let files = 0;
  const add = async (rel: string, size: number, next: (i: number) => Buffer) => {
    await writeBlocks(path.join(dir, rel), size, next);
    files++;
  };
  // The .blend interleaves structured binary and text-like blocks, as a saved scene does.
  await add('scene.blend', half / 8, (i) =>
    i === 0 ? Buffer.concat([Buffer.from('BLENDER-v304'), pick(meshes, i)]) : i % 2 ? pick(texts, i) : pick(meshes, i),
  );
  for (let n = 0; n < 4; n++) await add(`meshes/prop_${n}.obj`, half / 8, (i) => pick(texts, i + n));
  for (let n = 0; n < 2; n++) await add(`cache/sim_${n}.bin`, half / 8, (i) => pick(meshes, i + n));
  const small = half / 8 / 1024;
  for (let n = 0; n < 1024; n++)
    await add(`scripts/s${Math.floor(n / 64)}/note_${n}.txt`, small, (i) =>
      pick(texts, i + n).subarray((n * 997) % 4096),
    );
  const noise = Buffer.alloc(8 * MiB);
  const random = () => randomFillSync(noise);
  for (let n = 0; n < 48; n++) await add(`textures/tex_${n}.png`, (half * 3) / 4 / 48, random);
  for (let n = 0; n < 8; n++) await add(`textures/hdri_${n}.exr`, half / 4 / 8, random);
  return files;
}

/** Reads every file once so both tools start from the same, warm page cache. */
async function warm(dir: string): Promise<void> {
  const { walkFiles } = await import('../daemon/pack/expand.js');
  const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
  for (const f of (await walkFiles(dir)).files) await pipeline(createReadStream(f, { highWaterMark: MiB }), sink());
}

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
    spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child'], {
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

if (process.argv.includes('--child')) {
  child().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
