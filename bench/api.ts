// API throughput benchmark: the service's GET /jobs/{id} and GET /jobs?pageSize=100 against a
// bare fastify route answering the very same bytes, measured in the same run.
// Targets: >= 50% of the bare route's req/s, p99 < 20 ms. Not a test; `npm run bench:api`.
//
// Fairness on a small machine: the load generator (autocannon, this process) and the server
// under test are separate processes; with taskset the generator is pinned to CPU 0 and each
// server, one at a time, to CPU 1, so neither steals the other's core and both servers get the
// same single core. BENCH_PIN=0 turns pinning off.
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { API_PREFIX } from '../shared/constants.js';
import { seedJobs } from './lib/seed.js';
import { atExit, canPin, cpuSeconds, pinSelf, startChild, type Child } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, fmt, markdownTable, median, verdict, writeResultsSection, type Row } from './lib/results.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const WARMUP_SECONDS = Math.min(3, Math.max(1, Math.round(SECONDS / 5)));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const JOBS = Number(process.env.BENCH_JOBS ?? 10_000);
const ROTATE_IDS = 100;
const PIN = process.env.BENCH_PIN !== '0' && canPin() && os.availableParallelism() >= 2;
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 20;

async function fetchBody(url: string, key: string): Promise<string> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

const BARE = 'bare fastify';
const BYTES_PREFIX = '/bytes';
const BYTES = 'bare, fixed bytes';
type ServerName = typeof BARE | typeof BYTES | 'service';

interface Case {
  endpoint: string;
  /** Request paths, cycled by every connection. */
  paths: string[];
  /** Pick each request's path at random from `paths` instead. */
  random?: boolean;
}

interface Measured {
  reqPerSec: number;
  p50: number;
  p99: number;
  serverCpu: number;
  loadgenCpu: number;
  bad: number;
}

async function runLoad(origin: string, key: string, c: Case, seconds: number, pid: number): Promise<Measured> {
  const cpu0 = cpuSeconds(pid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await autocannon({
    url: origin,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    requests: c.random
      ? [
          {
            method: 'GET' as const,
            setupRequest: (req: object) => ({ ...req, path: c.paths[Math.floor(Math.random() * c.paths.length)] }),
          },
        ]
      : c.paths.map((p) => ({ method: 'GET' as const, path: p })),
  });
  const wall = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  return {
    reqPerSec: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    serverCpu: (cpuSeconds(pid) - cpu0) / wall,
    loadgenCpu: (own.user + own.system) / 1e6 / wall,
    bad: r.errors + r.timeouts + r.non2xx,
  };
}

async function main(): Promise<void> {
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rb-bench-api-'));
  atExit(() => rmSync(dataDir, { recursive: true, force: true }));
  const t = performance.now();
  const { key, ids } = await seedJobs(dataDir, JOBS);
  console.log(`seeded ${JOBS} jobs in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  if (PIN) pinSelf('0');
  const cpus = PIN ? { cpus: '1' } : {};
  const children: Child<{ origin: string }>[] = [];
  try {
    const service = await startChild<{ origin: string; baseUrl: string }>(
      'service-child.ts',
      { dataDir, rateLimitMax: 1e9 },
      cpus,
    );
    children.push(service);
    const { baseUrl } = service.ready;
    const cases: Case[] = [
      { endpoint: 'GET /jobs/{id}', paths: ids.slice(0, ROTATE_IDS).map((id) => `${API_PREFIX}/jobs/${id}`) },
      // Every request a job picked at random from all of them: mostly misses of the service's
      // document cache (it keeps 2,000), so this is the cost of reading the job from SQLite.
      { endpoint: 'GET /jobs/{id}, any of all jobs', paths: ids.map((id) => `${API_PREFIX}/jobs/${id}`), random: true },
      { endpoint: 'GET /jobs?pageSize=100', paths: [`${API_PREFIX}/jobs?pageSize=100`] },
    ];
    // The bare server answers each route with the bytes the service gave once; every seeded
    // job's document has the same length, so the rotated ids are served one of them.
    const getBody = await fetchBody(`${baseUrl}/jobs/${ids[0]}`, key);
    const listBody = await fetchBody(`${baseUrl}/jobs?pageSize=100`, key);
    const bare = await startChild<{ origin: string }>(
      'bare-child.ts',
      {
        routes: [
          { path: `${API_PREFIX}/jobs/:id`, body: getBody },
          { path: `${API_PREFIX}/jobs`, body: listBody },
        ],
        bytesPrefix: BYTES_PREFIX,
      },
      cpus,
    );
    children.push(bare);
    for (const prefix of ['', BYTES_PREFIX]) {
      if ((await fetchBody(`${bare.ready.origin}${prefix}${API_PREFIX}/jobs/${ids[0]}`, key)) !== getBody)
        throw new Error('bare body differs');
      if ((await fetchBody(`${bare.ready.origin}${prefix}${API_PREFIX}/jobs?pageSize=100`, key)) !== listBody)
        throw new Error('bare list differs');
    }
    console.log(`bodies: GET /jobs/{id} ${getBody.length} B, list ${listBody.length} B; pinned: ${PIN}`);

    const rows: Row[] = [];
    const verdicts: Row[] = [];
    const notes: string[] = [];
    let failed = false;
    for (const c of cases) {
      const runs: Record<ServerName, Measured[]> = { [BARE]: [], [BYTES]: [], service: [] };
      const targets: [ServerName, Child<{ origin: string }>, string][] = [
        [BARE, bare, ''],
        [BYTES, bare, BYTES_PREFIX],
        ['service', service, ''],
      ];
      for (let round = 1; round <= ROUNDS; round++) {
        // Rotate which server goes first, so slow drift on the machine hits all alike;
        // each measurement follows a warm-up run (JIT, connection setup).
        const order = [...targets.slice(round % 3), ...targets.slice(0, round % 3)];
        for (const [name, child, prefix] of order) {
          const cc = { ...c, paths: c.paths.map((p) => prefix + p) };
          await runLoad(child.ready.origin, key, cc, WARMUP_SECONDS, child.pid);
          const m = await runLoad(child.ready.origin, key, cc, SECONDS, child.pid);
          runs[name].push(m);
          rows.push({
            endpoint: c.endpoint,
            round: String(round),
            server: name,
            'req/s': fmt.int(m.reqPerSec),
            p50: fmt.ms(m.p50),
            p99: fmt.ms(m.p99),
            'server CPU': fmt.pct(m.serverCpu),
            'autocannon CPU': fmt.pct(m.loadgenCpu),
            'errors/non-2xx': String(m.bad),
          });
          console.log(consoleTable([rows.at(-1)!]));
        }
      }
      const med = (name: ServerName, f: (m: Measured) => number) => median(runs[name].map(f));
      const rps = (name: ServerName) => med(name, (m) => m.reqPerSec);
      const ratio = rps('service') / rps(BARE);
      const p99 = med('service', (m) => m.p99);
      const clean = Object.values(runs).every((list) => list.every((m) => m.bad === 0));
      // A bare server short of a full core was held back by the load generator (or by other load
      // on the machine): its req/s is understated and the ratio overstated.
      if (med(BARE, (m) => m.serverCpu) < 0.85) {
        notes.push(
          `**${c.endpoint}: the bare server did not use a full core; its req/s is a lower bound and the ` +
            `ratio is overstated.**`,
        );
      }
      failed ||= !(ratio >= TARGET_RATIO && p99 < TARGET_P99_MS && clean);
      verdicts.push({
        endpoint: c.endpoint,
        'bare req/s': fmt.int(rps(BARE)),
        'service req/s': fmt.int(rps('service')),
        'service/bare': fmt.pct(ratio),
        [`>= ${fmt.pct(TARGET_RATIO)}`]: verdict(ratio >= TARGET_RATIO),
        'bare p99': fmt.ms(med(BARE, (m) => m.p99)),
        'service p99': fmt.ms(p99),
        [`< ${TARGET_P99_MS} ms`]: verdict(p99 < TARGET_P99_MS),
        'no errors': verdict(clean),
        'fixed-bytes req/s': fmt.int(rps(BYTES)),
        'service/fixed bytes': fmt.pct(rps('service') / rps(BYTES)),
      });
    }

    // Stop the servers first so that their CPU time counts as ours, not as other load.
    for (const c of children) await c.stop();
    const others = otherLoad();
    console.log(loadNote(busy, others).slice(2));
    console.log(`\n${consoleTable(rows)}\n\n${consoleTable(verdicts)}${notes.map((n) => `\n${n}`).join('')}`);
    const body = `${machineMarkdown()}
${loadNote(busy, others)}

Setup: ${JOBS.toLocaleString('en-US')} jobs seeded in one workspace (SQLite, embedded defaults); autocannon,
${CONNECTIONS} connections, ${SECONDS} s per measurement after a ${WARMUP_SECONDS} s warm-up, with the API key header;
${ROUNDS} rounds per endpoint, rotating which server goes first; the targets use the **median** of the rounds.
GET /jobs/{id} cycles through ${ROTATE_IDS} job ids, which the service soon answers from its document cache (as for
clients polling their jobs; the cache follows the service's own writes at once and other processes'
commits within a millisecond); "any of all jobs" asks for one of all ${JOBS.toLocaleString('en-US')} at random per \
request,
mostly cache misses read from SQLite. The service runs compiled (dist/, as \`renderbridge service\`
does), with its per-request work on: authentication, rate limiting, request ids, metrics. The baseline ("a bare \
fastify route returning
the same JSON") is a fastify 5 route with no plugins, auth or database whose handler returns the JSON
value the service answered (${getBody.length} B for one job, ${listBody.length} B for the list), which
fastify serialises per request, as any route does. Also shown, as a floor: the same bare route sending
those bytes as a fixed string (no serialisation at all, "bare, fixed bytes"); the targets are judged
against the first. Service and bare server each run in a child process,
one at a time under load; ${
      PIN
        ? `autocannon is pinned to CPU 0 and the server under test to CPU 1
(taskset), so each server has one whole core and the load generator does not compete with it`
        : 'no CPU pinning (taskset unavailable or BENCH_PIN=0)'
    }.
"server CPU" is the server process's CPU time over the run (100% = one core); a bare server well
below 100% means the load generator, not the server, was the limit. Latencies are autocannon's,
at 1 ms resolution.

${markdownTable(rows)}

Targets (rate limit raised to 1e9 so it never answers 429):

${markdownTable(verdicts)}
${notes.map((n) => `\n${n}\n`).join('')}`;
    await writeResultsSection('api', 'API: service vs bare fastify (npm run bench:api)', body);
    console.log(`\nwrote bench/RESULTS.md; overall ${verdict(!failed)}`);
  } finally {
    for (const c of children) await c.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
