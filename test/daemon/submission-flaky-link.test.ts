// A submission over a link that drops (issue 30), as the daemon and `renderbridge submit` run it
// (runSubmission, the real packer, the real service with a worker and real Blender), through a real
// TCP proxy that goes down (every connection reset, new ones refused) and drops answers. A link
// that comes back within the client's patience costs nothing: the job renders, validated once.
// One that does not come back is said as a dropped connection, never blamed on the service URL.
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPacker } from '../../daemon/pack/packer.js';
import { createTracer } from '../../daemon/trace.js';
import { runSubmission, type SubmissionDeps } from '../../daemon/submit/run.js';
import type { Submission, SubmissionStep } from '../../shared/daemon/submission-schemas.js';
import { RenderJobClient } from '../../shared/client/client.js';
import type { RenderJobClientOptions } from '../../shared/client/options.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { startProxiedService, type ProxiedService } from '../helpers/proxied-service.js';

let ps: ProxiedService;
let scratch: string;
let zip: string;

beforeAll(async () => {
  ps = await startProxiedService('files', { workers: 1 });
  scratch = await mkdtemp(path.join(tmpdir(), 'rb-flaky-link-'));
  zip = path.join(scratch, 'shot.zip');
  await buildFixtureZip(['basic'], zip);
}, 180_000);
afterAll(async () => {
  await ps?.close();
  await rm(scratch, { recursive: true, force: true });
});

const settings = { frames: ['1-2'], renderConfig: { resolution: [64, 48] as [number, number], sampleCount: 4 } };

async function deps(options: Partial<RenderJobClientOptions> = {}): Promise<SubmissionDeps> {
  const client = new RenderJobClient({
    baseUrl: ps.baseUrl,
    apiKey: ps.svc.apiKey,
    baseDelayMs: 5,
    maxDelayMs: 50,
    maxRetries: 1,
    ...options,
  });
  // As the daemon's client, which has talked to the service before the artist submits: its URL
  // is known to work, so a lost connection is waited for.
  await client.listJobs({});
  return {
    clients: { client: async () => client, apiKeySource: async () => 'env' },
    packer: createPacker({
      workDir: path.join(scratch, 'packs'),
      trace: createTracer({ blender: 'blender' }),
      createdBy: 'renderbridge-test',
    }),
    downloadsDir: path.join(scratch, 'out'),
    pollMs: 100,
    progressIntervalMs: 0,
  };
}

describe('a submission over a flaky link', () => {
  it('survives the link going down at each step and a lost validate answer: it renders, validated once', async () => {
    const outages: SubmissionStep[] = [];
    const downs: number[] = [];
    ps.proxy.reset();
    ps.proxy.cut({ request: /^POST \S*\/validate /, afterBytes: 0, answer: true });
    let outage: Promise<void> = Promise.resolve();
    const onUpdate = (s: Submission): void => {
      if (!['uploading', 'creating', 'validating', 'rendering'].includes(s.step) || outages.includes(s.step)) return;
      outages.push(s.step);
      // Down until the client has been refused three times (far past maxRetries), then back.
      const refused = ps.proxy.refused();
      ps.proxy.linkDown();
      outage = outage
        .then(() => waitUntil(`three refused connections while ${s.step}`, () => ps.proxy.refused() >= refused + 3))
        .then(() => undefined)
        .finally(() => ps.proxy.linkUp());
    };
    const s = await runSubmission(
      { pack: { path: zip }, settings, download: false },
      await deps({ onReconnect: (i) => downs.push(i.downMs) }),
      onUpdate,
    );
    await outage;
    expect(s.error, JSON.stringify(s.error)).toBeNull();
    expect(s.step).toBe('done');
    expect(outages).toEqual(['uploading', 'creating', 'validating', 'rendering']);
    expect(downs.length).toBeGreaterThanOrEqual(3);
    expect(ps.proxy.cuts()).toBe(1);
    expect(ps.proxy.requests().filter((r) => r.endsWith('/validate'))).toHaveLength(1);
    const job = await new RenderJobClient({ baseUrl: ps.svc.baseUrl, apiKey: ps.svc.apiKey }).waitForStatus(
      s.jobId!,
      ['completed', 'failed', 'canceled'],
      { intervalMs: 200, timeoutMs: 300_000 },
    );
    expect(job.status).toBe('completed');
  }, 600_000);

  it(
    'a link that does not come back within the patience: the connection dropped, check the network, not the ' +
      'service URL',
    async () => {
      let downed = false;
      const onUpdate = (s: Submission): void => {
        if (s.step !== 'validating' || downed) return;
        downed = true;
        ps.proxy.linkDown();
      };
      try {
        const s = await runSubmission(
          { pack: { path: zip }, settings, download: false },
          await deps({ reconnectPatienceMs: 1500 }),
          onUpdate,
        );
        expect(s.step).toBe('failed');
        expect(s.error?.name).toBe('SERVICE_UNREACHABLE');
        expect(s.error?.message).toMatch(
          /the connection dropped and did not come back within \d+ s: check this computer's network connection, then submit again/,
        );
        expect(s.error?.message).not.toMatch(/service URL/);
      } finally {
        ps.proxy.linkUp();
      }
    },
    300_000,
  );
});
