// Packs and uploads in the tray (electron/core/transfers.ts through tray-model.ts) and in the job
// window (daemon/ui/, real Chromium): first the models on given event sequences, then both fed by
// a real bridge daemon submitting a 50 MB project folder to a real reference service: the tray's
// own SSE client records every tooltip, a MutationObserver in the page every line it showed.
// The Electron tray cannot run here (no Electron binary): main/tray.ts only hands it these models.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { DaemonEvents } from '../../electron/core/daemon-events.js';
import type { DaemonStatus } from '../../electron/core/supervisor.js';
import {
  applyDaemonEvent,
  EMPTY_TRAY_STATE,
  trayIcon,
  trayMenu,
  type TrayState,
} from '../../electron/core/tray-model.js';
import { transfersFromSubmissions } from '../../electron/core/transfers.js';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { PackState, Submission, Transfer } from '../../shared/daemon/submission-schemas.js';
import { DaemonClient } from '../../shared/daemon/client.js';
import { waitUntil } from '../helpers/e2e.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startTestBridge } from '../daemon/harness.js';
import { put, textBytes } from '../daemon/pack-helpers.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../scripts/chromium.mjs';

const MB = 1_000_000;
const running: DaemonStatus = {
  state: 'running',
  pid: 1,
  origin: 'http://127.0.0.1:1',
  port: 1,
  token: 't',
  restarts: 0,
  lastExit: null,
  nextStartAt: null,
  external: false,
};
const t = (bytesDone: number, bytesTotal: number, bytesPerSecond = 0, etaSeconds: number | null = null): Transfer => ({
  bytesDone,
  bytesTotal,
  bytesPerSecond,
  etaSeconds,
});
const pack = (patch: Partial<PackState>): DaemonEvent => ({
  event: 'pack',
  data: {
    packId: 'p1',
    state: 'packing',
    phase: 'hashing',
    progress: t(0, 0),
    result: null,
    error: null,
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '',
    ...patch,
  },
});
const sub = (patch: Partial<Submission>): DaemonEvent => ({
  event: 'submission',
  data: {
    id: 's1',
    path: '/projects/shot010/scene.blend',
    step: 'packing',
    jobId: null,
    uploadedBytes: 0,
    totalBytes: 0,
    pack: null,
    upload: null,
    preflight: null,
    warnings: [],
    error: null,
    outDir: null,
    createdAt: '2024-01-01T00:00:01Z',
    updatedAt: '',
    ...patch,
  },
});
const labels = (s: TrayState) =>
  trayMenu(s, running, { outputsDir: '/o' }).map((i) => ('label' in i ? i.label : '---'));

describe('tray transfers from event sequences', () => {
  it(
    'shows a background pack, then the submission uploading with what the farm already had, then nothing once ' +
      'it is sent',
    () => {
      let s = EMPTY_TRAY_STATE;
      s = applyDaemonEvent(s, pack({ progress: t(120 * MB, 500 * MB, 80 * MB, 4.8) }));
      expect(trayIcon(s, running)).toEqual({
        icon: 'busy',
        tooltip: 'Renderbridge: Packing 120 MB / 500 MB · 80 MB/s · 5 s left',
      });
      expect(labels(s).slice(2, 5)).toEqual(['Sending (1)', 'Packing 120 MB / 500 MB · 80 MB/s · 5 s left', '---']);
      const upload = {
        ...t(40 * MB, 160 * MB, 20 * MB, 6),
        mode: 'blobs' as const,
        bytesSkipped: 340 * MB,
        retries: 0,
      };
      s = applyDaemonEvent(s, sub({ step: 'uploading', upload }));
      expect(trayIcon(s, running).tooltip).toBe('Renderbridge: Packing 120 MB / 500 MB · 80 MB/s · 5 s left (+1 more)');
      s = applyDaemonEvent(s, pack({ state: 'ready', phase: null }));
      expect(trayIcon(s, running).tooltip).toBe(
        'Renderbridge: scene.blend — Uploading 40 MB / 160 MB · 20 MB/s · 6 s left (340 MB already on the farm)',
      );
      s = applyDaemonEvent(s, sub({ step: 'creating', upload: { ...upload, bytesDone: 160 * MB } }));
      expect(s.transfers).toEqual({ packs: {}, submissions: {} });
      expect(trayIcon(s, running).tooltip).toMatch(/no active jobs$/);
      expect(labels(s)).not.toContain('Sending (1)');
    },
  );

  it('drops a failed pack and takes the moving submissions from GET /submissions after a reconnection', () => {
    let s = applyDaemonEvent(EMPTY_TRAY_STATE, pack({}));
    s = applyDaemonEvent(
      s,
      pack({ state: 'failed', error: { name: 'PACK_FAILED', message: 'x', details: [], type: 'api', metadata: {} } }),
    );
    expect(s.transfers.packs).toEqual({});
    const listed = [sub({ id: 'a', step: 'rendering' }), sub({ id: 'b', step: 'packing', pack: t(MB, 2 * MB) })].map(
      (e) => e.data as Submission,
    );
    s = { ...s, transfers: transfersFromSubmissions(listed, s.transfers) };
    expect(Object.keys(s.transfers.submissions)).toEqual(['b']);
    expect(trayIcon(s, running).tooltip).toBe('Renderbridge: scene.blend — Packing 1.0 MB / 2.0 MB');
  });
});

const CHROMIUM = CHROMIUM_PATH;
const haveChromium = existsSync(CHROMIUM) && spawnSync(CHROMIUM, ['--version']).status === 0;
if (!haveChromium) {
  if (process.env.CI === 'true')
    throw new Error(`the transfers test needs ${CHROMIUM} (Debian: apt-get install chromium)`);
  console.warn(
    `skipping the job window part of the transfers test: ${CHROMIUM} missing (Debian: apt-get install chromium)`,
  );
}

describe('tray and job window from a real daemon', () => {
  let work: string;
  let svc: TestService;
  let daemon: RunningBridgeDaemon;
  let events: DaemonEvents;
  let browser: Browser | undefined;
  let state: TrayState = EMPTY_TRAY_STATE;
  let connected = false;
  const tooltips: string[] = [];

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'rb-tray-transfers-'));
    // No worker: the submission waits at `validating` once sent, which is all this test follows.
    svc = await startTestService();
    daemon = await startTestBridge({
      serviceUrl: svc.baseUrl,
      apiKey: svc.apiKey,
      work,
      stateDir: path.join(work, 'state'),
    });
    events = new DaemonEvents({
      connection: () => ({ origin: daemon.origin, token: daemon.token }),
      onOpen: () => (connected = true),
      onEvent: (e) => {
        state = applyDaemonEvent(state, e);
        tooltips.push(trayIcon(state, running).tooltip);
      },
    });
    events.start();
    if (haveChromium) browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await events?.stop();
    await daemon?.close();
    await svc?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('shows packing and uploading with their bytes in tooltip and job window, then neither once sent', async () => {
    const project = path.join(work, 'shot010');
    put(path.join(project, 'scene.blend'), Buffer.concat([Buffer.from('BLENDER-v304'), textBytes(200_000)]));
    for (let i = 0; i < 4; i++) put(path.join(project, 'cache', `part${i}.bin`), textBytes(12_450_000, i));
    const page = await browser?.newPage();
    if (page) {
      await page.goto(`${daemon.origin}/ui/#token=${daemon.token}`);
      await page.waitForSelector('#connection[data-state="live"]');
      // Every line the page shows: each render adds fresh rows, and every added row is recorded
      // (the observer's callback runs batched, its records list each addition).
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        new MutationObserver((records) => {
          for (const r of records)
            for (const n of r.addedNodes) if (n instanceof HTMLLIElement) seen.push(n.textContent ?? '');
        }).observe(document.getElementById('transfers')!, { childList: true });
      });
    }
    await waitUntil('the tray connected', () => connected);
    const client = new DaemonClient({ origin: daemon.origin, token: daemon.token });
    const started = await client.submit({ pack: { path: project }, mode: 'check' });
    await waitUntil(
      'the submission past its upload',
      async () => ['validating', 'failed'].includes((await client.getSubmission(started.id)).step),
      { timeoutMs: 60_000 },
    );
    const end = await client.getSubmission(started.id);
    expect(end.error).toBeNull();

    const total = /\/ 50 MB/;
    const packing = tooltips.filter((l) => l.startsWith('Renderbridge: shot010 — Packing '));
    expect(packing.length, tooltips.join('\n')).toBeGreaterThan(0);
    expect(packing[0]).toMatch(total);
    const uploading = tooltips.filter((l) => l.startsWith('Renderbridge: shot010 — Uploading '));
    expect(uploading.length, tooltips.join('\n')).toBeGreaterThan(0);
    // Sent: the tooltip is back to the jobs.
    await waitUntil('the tooltip without transfers', () => !tooltips.at(-1)!.includes('shot010 — '));

    if (page) {
      const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
      expect(
        seen.some((l) => /^shot010Packing [\d.]+ [kM]?B \/ 50 MB/.test(l)),
        seen.join('\n'),
      ).toBe(true);
      expect(
        seen.some((l) => l.startsWith('shot010Uploading ')),
        seen.join('\n'),
      ).toBe(true);
      await page.waitForSelector('#sending', { state: 'hidden' });
      await page.close();
    }
  }, 120_000);
});
