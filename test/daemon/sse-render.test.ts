// End to end with real Blender: a daemon pointing at a service with a worker, its API key from the
// environment, and the service's signed onRenderComplete webhook pointing at the daemon's
// receiver. A job submitted through the shared client directly shows up on the daemon's SSE
// stream as `job` and `progress` events, and exactly one `renderComplete` (completed) arrives,
// although the daemon learns of the completion twice (by polling and by the webhook).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCompleteEventId } from '../../service/webhooks/delivery.js';
import { generateWebhookSecret } from '../../shared/webhooks/signing.js';
import { DAEMON_EVENTS, DAEMON_WEBHOOK_PATH } from '../../shared/daemon/api.js';
import { startE2E, tinyRender, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { openSse, startTestDaemon, type SseReader, type TestDaemon } from './harness.js';

let e2e: E2E;
let td: TestDaemon;
let sse: SseReader;
let work: string;
const secret = generateWebhookSecret();

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-sse-render-'));
  e2e = await startE2E({ webhooks: { baseDelayMs: 200, pollIntervalMs: 100 } });
  td = await startTestDaemon(
    { serviceUrl: e2e.svc.baseUrl, webhookSecret: secret, pollActiveMs: 250, pollIdleMs: 1000 },
    { apiKey: e2e.svc.apiKey },
  );
  await e2e.svc.service.webhooks.setWebhook(e2e.svc.workspaceId, {
    url: `${td.daemon.origin}${DAEMON_WEBHOOK_PATH}`,
    secret,
  });
  sse = await openSse(td.daemon.origin, td.daemon.token);
  await sse.waitFor('the stream to open', (r) => r.frames.length >= 1);
}, 120_000);
afterAll(async () => {
  sse?.close();
  await td?.close();
  await e2e?.svc.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('SSE stream during a real render', () => {
  it('delivers job and progress events and exactly one renderComplete with status completed', async () => {
    const { client, svc } = e2e;
    const zip = path.join(work, 'project.zip');
    await buildFixtureZip(['basic'], zip);
    const target = await client.uploadProject(zip);
    const created = await client.createJob({ slug: target.slug });
    const id = created.id;
    await client.validateJob(id, {});
    await client.waitForStatus(id, ['validated'], { intervalMs: 150, timeoutMs: 90_000 });
    // 300 frames: a render phase of several poll intervals even with a warm Blender (a few
    // frames now render between two polls).
    await client.renderJob(id, tinyRender('1-300'));
    await client.waitForStatus(id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });

    const complete = await sse.waitFor(
      'renderComplete on the stream',
      (r) => r.events().find((e) => e.event === 'renderComplete' && (e.data as { jobId?: string }).jobId === id),
      30_000,
    );
    // The webhook reached the daemon too (signed, answered 2xx on the first attempt)...
    const delivery = await waitUntil(
      'the webhook delivered to the daemon',
      async () => {
        const d = await svc.service.webhooks.getDelivery(renderCompleteEventId(id));
        return d?.state === 'delivered' ? d : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(delivery.attempts).toBe(1);
    // ...and the polls after it found nothing new to announce. A job created now is announced by a
    // later poll, on the same ordered stream: once its event is here, so is anything those polls sent.
    const polled = td.daemon.tracker.polls;
    await waitUntil('two more polls', () => td.daemon.tracker.polls >= polled + 2, { timeoutMs: 10_000 });
    const marker = await client.createJob({ slug: (await client.uploadProject(zip)).slug });
    const isMarker = (e: { event: string; data: unknown }) =>
      e.event === 'job' && (e.data as { job: { id: string } }).job.id === marker.id;
    await sse.waitFor('the next job on the stream', (r) => r.events().some(isMarker), 30_000);

    const all = sse.events();
    const completes = all.filter((e) => e.event === 'renderComplete');
    expect(completes).toHaveLength(1);
    const rc = DAEMON_EVENTS.renderComplete.parse(complete.data);
    expect(rc).toMatchObject({ jobId: id, status: 'completed', outDir: null, job: { id, status: 'completed' } });

    // Every event parses with its shared schema.
    for (const e of all) DAEMON_EVENTS[e.event as keyof typeof DAEMON_EVENTS].parse(e.data);
    const jobEvents = all
      .filter((e) => e.event === 'job')
      .map((e) => DAEMON_EVENTS.job.parse(e.data))
      .filter((t) => t.job.id === id);
    const statuses = jobEvents.map((t) => t.job.status);
    // Polling sees what the job is in at each poll (a short state may fall between two), always
    // in the job's own order, ending with completed.
    const order = ['created', 'validating', 'validated', 'booting', 'rendering', 'finalizing', 'completed'];
    const ranks = statuses.map((s) => order.indexOf(s));
    expect(
      ranks.every((r, i) => r >= 0 && (i === 0 || r >= ranks[i - 1]!)),
      statuses.join(' > '),
    ).toBe(true);
    expect(statuses.some((s) => s === 'validating' || s === 'booting' || s === 'rendering' || s === 'finalizing')).toBe(
      true,
    );
    expect(statuses.at(-1)).toBe('completed');
    expect(jobEvents.at(-1)!.progress).toMatchObject({ jobId: id, framesTotal: 300, framesDone: 300 });
    const progress = all
      .filter((e) => e.event === 'progress')
      .map((e) => DAEMON_EVENTS.progress.parse(e.data))
      .filter((p) => p.jobId === id);
    expect(progress.length).toBeGreaterThan(0);
    // renderComplete comes after the job's last change, never before.
    expect(all.map((e) => e.event).lastIndexOf('renderComplete')).toBeGreaterThan(
      all.findLastIndex((e) => e.event === 'job' && (e.data as { job: { id: string } }).job.id === id),
    );
  }, 300_000);
});
