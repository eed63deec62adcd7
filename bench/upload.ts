// Upload benchmark: a streaming PUT of a large file to the service's presigned upload URL
// against the same PUT to a bare node:http server (bench/lib/bare-put-child.ts: streams the body
// to a file on the same disk and fsyncs, no auth, no hashing), measured in the same run, plus the
// service's RSS growth while it receives the file.
// Targets: >= 80% of the bare server's throughput, RSS growth < 64 MiB. Not a test;
// `npm run bench:upload` (BENCH_UPLOAD_MB, BENCH_ROUNDS change the size and rounds).
import { spawnSync } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createApiKey } from '../service/domain/api-keys.js';
import { openKeyStore } from '../service/stack.js';
import { atExit, cpuTimes, rssBytes, startChild } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, fmt, markdownTable, median, verdict, writeResultsSection, type Row } from './lib/results.js';

const SIZE = Number(process.env.BENCH_UPLOAD_MB ?? 1024) * 1024 * 1024;
// Even by default: the order alternates, and each server should go first as often as second.
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 6));
const TARGET_RATIO = 0.8;
const TARGET_RSS = 64 * 1024 * 1024;
const MB = 1e6;

/** Writes `size` random bytes to `file` and returns their SHA-256 (to check what the service stored). */
async function randomFile(file: string, size: number): Promise<string> {
  const fh = await open(file, 'wx');
  const buf = Buffer.alloc(8 * 1024 * 1024);
  const hash = createHash('sha256');
  try {
    for (let done = 0; done < size;) {
      const chunk = buf.subarray(0, Math.min(buf.length, size - done));
      randomFillSync(chunk);
      hash.update(chunk);
      await fh.write(chunk);
      done += chunk.length;
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex');
}

/** Share of `file` resident in the page cache, from util-linux fincore; undefined without it. */
function cachedShare(file: string, size: number): number | undefined {
  const r = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', file], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) / size : undefined;
}

async function api<T>(url: string, key: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * Streams `file` to `url` (node:http, Content-Length, never buffered). Resolves with the answer
 * body and the seconds between the last byte handed to the socket and the answer: the service's
 * tail (draining its buffers to the file, fsync, link, database update).
 */
function put(url: string, file: string, size: number): Promise<{ text: string; tail: number }> {
  return new Promise((resolve, reject) => {
    let sentAt = 0;
    const req = http.request(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
    });
    req.once('error', reject);
    req.once('finish', () => (sentAt = performance.now()));
    req.once('response', (res) => {
      const tail = (performance.now() - sentAt) / 1000;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('error', reject);
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve({ text, tail });
        else reject(new Error(`PUT ${res.statusCode}: ${text}`));
      });
    });
    // 1 MiB reads: with the 64 KiB default the client, not the service, was the bottleneck
    // (it used more CPU per byte than the server on this 2-core machine).
    pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), req).catch(reject);
  });
}

interface Measured {
  seconds: number;
  answer: string;
  row: Row;
  growth: number;
}

/** PUTs the source to `url` while sampling the receiving server's RSS and CPU. */
async function measuredPut(url: string, src: string, serverPid: number): Promise<Measured> {
  const before = rssBytes(serverPid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(serverPid))), 100);
  const cpu0 = cpuTimes(serverPid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const { text: answer, tail } = await put(url, src, SIZE).finally(() => clearInterval(sampler));
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  const cpu = cpuTimes(serverPid);
  peak = Math.max(peak, rssBytes(serverPid));
  return {
    seconds,
    answer,
    growth: peak - before,
    row: {
      'server CPU s (user + sys)': `${(cpu.user - cpu0.user).toFixed(2)} + ${(cpu.sys - cpu0.sys).toFixed(2)}`,
      'client CPU s': ((own.user + own.system) / 1e6).toFixed(2),
      'answer after last byte s': tail.toFixed(2),
      'server RSS growth': `${fmt.mib(peak - before)} (${fmt.mib(before)} -> ${fmt.mib(peak)})`,
    },
  };
}

async function main(): Promise<void> {
  // One temp folder holds the source, the bare server's files and the service's data dir: one disk.
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const work = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-upload-'));
  atExit(() => rmSync(work, { recursive: true, force: true }));
  const src = path.join(work, 'source.bin');
  const bareDir = path.join(work, 'bare');
  const dataDir = path.join(work, 'data');

  console.log(`writing ${fmt.mib(SIZE)} of random data to ${src}`);
  const sha256 = await randomFile(src, SIZE);
  await mkdir(bareDir);
  const keys = await openKeyStore(dataDir);
  const { key } = await createApiKey(keys.keys, { workspace: 'bench', label: 'bench' }).finally(() => keys.close());
  if ((await stat(src)).dev !== (await stat(dataDir)).dev)
    throw new Error('source and data dir are on different devices');

  const service = await startChild<{ baseUrl: string }>('service-child.ts', { dataDir, rateLimitMax: 1e9 });
  const bare = await startChild<{ origin: string }>('bare-put-child.ts', { dir: bareDir });
  const rows: Row[] = [];
  const speeds: Record<string, number[]> = {};
  const growth: Record<string, number[]> = {};
  const cached: string[] = [];
  const byPosition: Record<string, number[]> = {};
  const record = (round: number, step: string, m: Measured) => {
    (speeds[step] ??= []).push(SIZE / MB / m.seconds);
    // Odd rounds run the bare server first, even rounds the service.
    const first = (round % 2 === 1) === (step === 'bare node:http PUT');
    (byPosition[`${step} ${first ? 'first' : 'second'}`] ??= []).push(SIZE / MB / m.seconds);
    (growth[step] ??= []).push(m.growth);
    rows.push({
      round: String(round),
      step,
      seconds: m.seconds.toFixed(2),
      'MB/s': fmt.mbps(SIZE / MB / m.seconds),
      ...m.row,
    });
    console.log(consoleTable([rows.at(-1)!]));
  };
  try {
    const { baseUrl } = service.ready;
    // Each timed step starts with no dirty pages left over from the previous one.
    const sync = () => spawnSync('sync', { stdio: 'inherit' });
    const bareStep = async (round: number) => {
      sync();
      const m = await measuredPut(`${bare.ready.origin}/upload`, src, bare.pid);
      const stored = JSON.parse(m.answer) as { size: number; file: string };
      if (stored.size !== SIZE) throw new Error(`bare server stored something else: ${m.answer}`);
      await rm(stored.file);
      record(round, 'bare node:http PUT', m);
    };
    const serviceStep = async (round: number) => {
      sync();
      const { uploadUrl, slug } = await api<{ uploadUrl: string; slug: string }>(`${baseUrl}/uploads`, key, {
        fileName: 'scene.blend',
        fileType: 'blend',
      });
      const m = await measuredPut(uploadUrl, src, service.pid);
      const stored = JSON.parse(m.answer) as { size: number; sha256: string };
      if (stored.size !== SIZE || stored.sha256 !== sha256)
        throw new Error(`service stored something else: ${m.answer}`);
      if (round === 1) await api(`${baseUrl}/jobs`, key, { slug }); // the whole flow works, once
      const objectKey = decodeURIComponent(new URL(uploadUrl).pathname.replace(/^\/storage\//, ''));
      // Drop the stored object so the disk does not fill up over rounds.
      await rm(path.join(dataDir, 'objects', ...objectKey.split('/')));
      record(round, 'service PUT', m);
    };
    // Both steps in every round, the order swapped each round, so drift (page cache,
    // writeback, other load) hits both alike.
    for (let round = 1; round <= ROUNDS; round++) {
      const share = cachedShare(src, SIZE);
      cached.push(share === undefined ? 'unknown' : fmt.pct(share));
      if (round % 2 === 1) {
        await bareStep(round);
        await serviceStep(round);
      } else {
        await serviceStep(round);
        await bareStep(round);
      }
    }
  } finally {
    await Promise.all([service.stop(), bare.stop()]);
  }
  const others = otherLoad();
  console.log(loadNote(busy, others).slice(2));

  const med = (step: string) => median(speeds[step]!);
  const ratio = med('service PUT') / med('bare node:http PUT');
  const maxGrowth = Math.max(...growth['service PUT']!);
  const summary: Row[] = [
    {
      'bare node:http PUT': fmt.mbps(med('bare node:http PUT')),
      'service PUT': fmt.mbps(med('service PUT')),
      'service / bare': fmt.pct(ratio),
      [`>= ${fmt.pct(TARGET_RATIO)}`]: verdict(ratio >= TARGET_RATIO),
      'service max RSS growth': fmt.mib(maxGrowth),
      '< 64 MiB': verdict(maxGrowth < TARGET_RSS),
      'bare max RSS growth': fmt.mib(Math.max(...growth['bare node:http PUT']!)),
    },
  ];
  const pos = (k: string) => (byPosition[k] ? fmt.mbps(median(byPosition[k])) : '-');
  const order: Row[] = ['bare node:http PUT', 'service PUT'].map((step) => ({
    step,
    'first in its round': pos(`${step} first`),
    'second in its round': pos(`${step} second`),
  }));
  console.log(`\n${consoleTable(rows)}\n\n${consoleTable(summary)}\n\n${consoleTable(order)}`);

  const body = `${machineMarkdown()}
${loadNote(busy, others)}

Setup: ${fmt.mib(SIZE)} of random data in a temp folder on the same filesystem as the service's
data dir (${os.tmpdir()}). The same client (node:http, Content-Length, \`fs.createReadStream\`
with 1 MiB reads piped into the request) PUTs it to two servers, each in its own child process:
**the baseline**, a bare \`node:http\` server (bench/lib/bare-put-child.ts) that pipes the body
into a new file on the same disk with a file handle's write stream and fsyncs it before answering
(no auth, no signature, no hashing, no database), and **the service**, at a presigned upload URL
(signature check, SHA-256 of the body, batched writes with background fdatasync, fsync, atomic
link, database update). ${ROUNDS} rounds, each timing both, the order swapped every round; \`sync\`
runs (untimed) before every step so no writeback is left over, and stored files are deleted
after each step. Summary numbers are the **median** of the rounds; MB = 10^6 bytes. Caches were
**warm**: the source file was written just before and stayed in the page cache (resident share
per round: ${cached.join(', ')}), so every step reads it from memory and measures the receiving side.
A PUT's time runs from the request to the end of the answer (after the server's fsync); the CPU
columns are the receiving server's CPU time, split into user space and kernel, and this client's;
"answer after last byte" is the time from the client handing its last byte to the socket to the
answer (the server's fsync and bookkeeping, plus whatever it still had buffered). RSS is the
receiving server's VmRSS sampled every 100 ms during the PUT; growth is the peak minus the value
just before (MiB = 2^20 B).

${markdownTable(rows)}

Summary (medians):

${markdownTable(summary)}

Medians by position in the round. The order alternates and the rounds are even by default
because the disk's speed depends on what came before: on this VM (ext4 mounted with \`discard\`),
writing into blocks that were freed and trimmed a few seconds earlier measured several times
slower than writing right after a delete, so a step's speed depends on when the previous step's
deleted file is trimmed. Alternating gives both servers the same share of each position:

${markdownTable(order)}
`;
  await writeResultsSection(
    'upload',
    "Upload: the service's streaming PUT vs a bare node:http PUT (npm run bench:upload)",
    body,
  );
  console.log(`\nwrote bench/RESULTS.md; overall ${verdict(ratio >= TARGET_RATIO && maxGrowth < TARGET_RSS)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
