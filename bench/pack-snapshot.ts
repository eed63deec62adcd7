// Pack snapshot benchmark: what taking a pack as a snapshot (daemon/pack/snapshot.ts: .blend files
// copied, every other file hard-linked into the pack's folder, then hashed there) costs against
// packing without it (plan, hash the artist's files, write the manifest: the packer before the
// snapshot), on the same generated project, in the same run, alternating which goes first. Both
// a first pack (empty hash cache: every file is read) and a re-pack of the unchanged project
// (the hash cache knows every file: nothing is read). Also the extra disk a kept pack uses.
// Target: a first pack of a 2 GB project under 1.2x its time without the snapshot.
// Not a test; `npm run bench:pack-snapshot` (BENCH_PACK_MB, BENCH_ROUNDS change the size and rounds).
import { randomFillSync } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { spawnSync } from 'node:child_process';
import { HashCache } from '../daemon/pack/hash-cache.js';
import { hashFiles } from '../daemon/pack/hash-files.js';
import { buildManifest } from '../daemon/pack/manifest-build.js';
import { planFolder } from '../daemon/pack/pack-project.js';
import { createPacker } from '../daemon/pack/packer.js';
import { walkFiles } from '../daemon/pack/expand.js';
import { atExit } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, fmt, markdownTable, median, verdict, writeResultsSection, type Row } from './lib/results.js';

const TOTAL = Number(process.env.BENCH_PACK_MB ?? 2048) * 1024 * 1024;
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 3));
const TARGET = 1.2;
const MiB = 1024 * 1024;

/** Writes `size` bytes of `fill()` blocks to `file`. */
async function writeBlocks(file: string, size: number, fill: (b: Buffer, i: number) => void): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const fh = await open(file, 'wx');
  const block = Buffer.alloc(4 * MiB);
  try {
    for (let done = 0, i = 0; done < size; i++) {
      fill(block, i);
      const n = Math.min(block.length, size - done);
      await fh.write(block, 0, n);
      done += n;
    }
  } finally {
    await fh.close();
  }
}

/**
 * A studio-like project: a scene .blend of 1/8 and a linked library .blend of 1/32 of the total
 * (the copied share), textures and HDRIs (random bytes) of 1/2, caches of the rest, and 1,000
 * small files. Answers the bytes in .blend files.
 */
async function generate(dir: string, total: number): Promise<{ files: number; blendBytes: number }> {
  const random = (b: Buffer) => void randomFillSync(b);
  // .blend-like: structured, partly repetitive (it is hashed, never compressed here).
  const blendish = (b: Buffer, i: number) => {
    randomFillSync(b, 0, b.length / 2);
    b.fill(i % 251, b.length / 2);
  };
  let files = 0;
  const add = async (rel: string, size: number, fill: (b: Buffer, i: number) => void) => {
    await writeBlocks(path.join(dir, rel), Math.floor(size), fill);
    files++;
  };
  const scene = total / 8;
  const library = total / 32;
  await add('scene.blend', scene, blendish);
  await add('libs/props.blend', library, blendish);
  for (let n = 0; n < 40; n++) await add(`textures/tex_${n}.png`, total / 2 / 40, random);
  const rest = total - scene - library - total / 2;
  for (let n = 0; n < 8; n++) await add(`cache/sim_${n}.bin`, (rest - 1000 * 16384) / 8, random);
  for (let n = 0; n < 1000; n++) await add(`scripts/s${Math.floor(n / 100)}/note_${n}.txt`, 16384, random);
  return { files, blendBytes: scene + library };
}

/** Reads every file once so both ways start from the same warm page cache. */
async function warm(dir: string): Promise<void> {
  const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
  for (const f of (await walkFiles(dir)).files) await pipeline(createReadStream(f, { highWaterMark: MiB }), sink());
}

/** The pack as it was before snapshots: plan, hash the artist's files, write the manifest. */
async function packWithout(dir: string, cache: HashCache, out: string): Promise<void> {
  const planned = await planFolder(dir);
  const hashed = await hashFiles(planned.files, { cache });
  const manifest = buildManifest(
    planned.layout,
    hashed.map((h) => ({ name: h.name, size: h.size, sha256: h.sha256, deflated: h.deflate })),
    'bench',
  );
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'renderbridge-manifest.json'), manifest.bytes);
}

/** Bytes the pack's folder really adds to the disk: files with one link only (copies), by their blocks. */
async function extraBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const s = await lstat(path.join(dir, name));
    if (s.isFile() && s.nlink === 1) bytes += s.blocks * 512;
  }
  return bytes;
}

async function main(): Promise<void> {
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const work = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-snapshot-'));
  atExit(() => rmSync(work, { recursive: true, force: true }));
  const dir = path.join(work, 'project');
  console.log(`generating ${fmt.mib(TOTAL)} of project files in ${dir}`);
  const { files, blendBytes } = await generate(dir, TOTAL);
  // Older than the hash cache's 2 s "racy" window, so the re-packs find every file cached.
  await new Promise((r) => setTimeout(r, 2500));
  await warm(dir);
  const sync = () => spawnSync('sync', { stdio: 'inherit' });
  const rows: Row[] = [];
  const seconds: Record<string, number[]> = {
    'without, first': [],
    'snapshot, first': [],
    'without, re-pack': [],
    'snapshot, re-pack': [],
  };
  let extra = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? ['without', 'snapshot'] : ['snapshot', 'without'];
    for (const way of order) {
      const cache = new HashCache();
      const workDir = path.join(work, `packs-${way}-${round}`);
      const packer = createPacker({
        workDir,
        trace: async () => ({ dependencies: [], warnings: [] }),
        createdBy: 'bench',
        hashCache: cache,
      });
      for (const pass of ['first', 're-pack'] as const) {
        sync();
        const t0 = performance.now();
        let packId: string | undefined;
        if (way === 'without') await packWithout(dir, cache, path.join(workDir, `${pass}`));
        else packId = (await packer.pack({ path: dir })).packId;
        const s = (performance.now() - t0) / 1000;
        const key = `${way}, ${pass}`;
        seconds[key]!.push(s);
        const row: Row = { round: String(round), way, pass, seconds: s.toFixed(2), 'MB/s': fmt.mbps(TOTAL / 1e6 / s) };
        if (packId) {
          const added = await extraBytes(path.join(workDir, packId));
          extra = Math.max(extra, added);
          row['extra disk'] = fmt.mib(added);
          // Removed as after its upload, so each pass copies afresh.
          await packer.discard(packId);
        }
        rows.push(row);
        console.log(consoleTable([row]));
      }
      await rm(workDir, { recursive: true, force: true });
    }
  }
  const others = otherLoad();
  const m = (k: string) => median(seconds[k]!);
  const first = m('snapshot, first') / m('without, first');
  const repack = m('snapshot, re-pack') / m('without, re-pack');
  const summary: Row[] = [
    {
      pack: 'first (nothing cached)',
      without: `${m('without, first').toFixed(2)} s`,
      snapshot: `${m('snapshot, first').toFixed(2)} s`,
      'snapshot / without': `${first.toFixed(2)}x`,
      [`< ${TARGET}x`]: verdict(first < TARGET),
    },
    {
      pack: 're-pack (all cached)',
      without: `${m('without, re-pack').toFixed(2)} s`,
      snapshot: `${m('snapshot, re-pack').toFixed(2)} s`,
      'snapshot / without': `${repack.toFixed(2)}x`,
      [`< ${TARGET}x`]: verdict(repack < TARGET),
    },
  ];
  console.log(
    `\n${consoleTable(rows)}\n\n${consoleTable(summary)}\nextra disk per kept pack: ${fmt.mib(extra)} ` +
      `(.blend files: ${fmt.mib(blendBytes)})`,
  );
  const body = `${machineMarkdown()}
${loadNote(busy, others)}

Setup: a generated project of ${fmt.mib(TOTAL)} in ${files} files in a temp folder (${os.tmpdir()}, the
pack folders beside it on the same filesystem): a scene \`.blend\` of 1/8 and a library \`.blend\` of
1/32 of the total (${fmt.mib(blendBytes)} of \`.blend\`), 40 textures (random bytes) making half, 8 caches,
1,000 small files. Every file is read once first (warm page cache) and is older than the hash
cache's 2 s window. ${ROUNDS} rounds; in each, both ways pack the folder twice with one fresh hash cache:
**first** (nothing cached: every file is read and hashed) and **re-pack** (every file cached: nothing
is read). **without**: the packer's steps before snapshots (\`planFolder\`, \`hashFiles\` over the
artist's files, the manifest written). **snapshot**: the daemon's packer (\`createPacker().pack\`:
the same, with \`takeSnapshot\` first: \`.blend\` files copied, a reflink where the filesystem clones,
the rest hard-linked, then hashed from the pack's folder), its pack discarded after each pass as after
an upload. \`sync\` runs (untimed) before each pass; the order alternates per round. Times are wall
clock; the summary gives **medians**. Extra disk: the blocks of the files in the pack's folder with a
single link (the copies; hard links add none).

${markdownTable(rows)}

Summary (medians):

${markdownTable(summary)}

Extra disk per kept pack: **${fmt.mib(extra)}** (the \`.blend\` files: ${fmt.mib(blendBytes)}, copied for real on
this filesystem; 0 where reflinks work). Bounded by the packer's \`maxCopiedBytes\` (16 GiB) over
every kept pack; removed when its upload is done or the pack expires.
`;
  await writeResultsSection(
    'pack-snapshot',
    'Pack snapshot: .blend copies and hard links vs no snapshot (npm run bench:pack-snapshot)',
    body,
  );
  console.log(`\nwrote bench/RESULTS.md; first pack ${verdict(first < TARGET)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
