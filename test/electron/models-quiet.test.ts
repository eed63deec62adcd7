// The tray's notifications where there is nothing to open or nothing to say (models-harness.ts: a real
// daemon watching real jobs): a render with downloading off says how to get its outputs and opens the
// job window from Recent; a canceled render notifies nothing and leaves Recent.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { notificationFor, submissionNotification } from '../../electron/core/notifications.js';
import { recentJobs, trayIcon, trayMenu } from '../../electron/core/tray-model.js';
import type { Submission } from '../../shared/daemon/submission-schemas.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { daemonCall } from '../daemon/harness.js';
import { labels, useTrayRig } from './models-harness.js';

const rig = useTrayRig();

describe('tray models from a real daemon', () => {
  it(
    'a render with downloading off notifies "Render complete" saying how to get its outputs; a canceled one ' +
      'notifies nothing',
    async () => {
      const { daemon, work, running, notifications, completions, submissions } = rig;
      const call = daemonCall(daemon);
      const renderConfig = { resolution: [64, 48], sampleCount: 4, colorManagementPreset: 'default' };
      const jobOf = (id: string) =>
        waitUntil(
          `the job of submission ${id}`,
          async () => ((await call('GET', `/submissions/${id}`)).json as Submission).jobId ?? undefined,
          { timeoutMs: 120_000 },
        );
      const before = notifications.length;

      const kept = path.join(work, 'kept.zip');
      await buildFixtureZip(['basic'], kept, 'kept');
      const started = await call('POST', '/submissions', {
        pack: { path: kept },
        settings: { frames: ['1'], renderConfig },
        download: false,
      });
      expect(started.status, started.text).toBe(202);
      const keptJob = await jobOf((started.json as Submission).id);
      const done = await waitUntil('its renderComplete', () => completions.find((c) => c.jobId === keptJob), {
        timeoutMs: 180_000,
      });
      expect(done).toMatchObject({ status: 'completed', outDir: null });
      const n = notificationFor(done);
      expect(n).toEqual({
        title: 'Render complete',
        body:
          `basic.blend is done. Its outputs stay on the farm (not downloaded): get them with Download in the ` +
          `Blender add-on's Recent jobs, or renderbridge jobs download ${keptJob}.`,
        openPath: null,
        urgency: 'normal',
      });
      expect(notifications.slice(before)).toEqual([n]);
      // Under Recent it opens the job window (there is no folder to open).
      const recent = trayMenu(rig.state, running, { outputsDir: path.join(work, 'outputs') }).filter(
        (i) => i.kind === 'item' && i.label === '✓ basic.blend — completed',
      );
      expect(recent).toContainEqual({
        kind: 'item',
        label: '✓ basic.blend — completed',
        enabled: true,
        action: { type: 'openJobWindow' },
      });

      // Long enough to be caught rendering: many frames at many samples.
      const long = path.join(work, 'long.zip');
      await buildFixtureZip(['basic'], long, 'long');
      const sent = await call('POST', '/submissions', {
        pack: { path: long },
        settings: { frames: ['1-250'], renderConfig: { ...renderConfig, sampleCount: 4096 } },
        outDir: path.join(work, 'long-out'),
      });
      expect(sent.status, sent.text).toBe(202);
      const subId = (sent.json as Submission).id;
      const longJob = await jobOf(subId);
      await waitUntil('the tray to show it rendering', () => rig.state.jobs[longJob]?.job.status === 'rendering', {
        timeoutMs: 120_000,
      });
      expect(trayIcon(rig.state, running).tooltip).toMatch(/^Renderbridge: basic\.blend rendering/);
      const canceled = await call('POST', `/jobs/${longJob}/cancel`);
      expect(canceled.status, canceled.text).toBe(200);
      // Its renderComplete and its failed submission are the events that could have notified.
      const end = await waitUntil('its renderComplete', () => completions.find((c) => c.jobId === longJob), {
        timeoutMs: 60_000,
      });
      expect(end.status).toBe('canceled');
      expect(notificationFor(end)).toBeNull();
      const sub = await waitUntil(
        'its submission to fail',
        () => submissions.find((x) => x.id === subId && x.step === 'failed'),
        { timeoutMs: 60_000 },
      );
      expect(sub.error?.name).toBe('JOB_CANCELED');
      expect(submissionNotification(sub)).toBeNull();
      expect(notifications.slice(before)).toEqual([n]);
      // Gone from the active jobs, and not listed under Recent (which lists what completed or failed).
      expect(labels(trayMenu(rig.state, running, { outputsDir: '/o' }))).toContain('No active jobs');
      expect(recentJobs(rig.state, 20).map((r) => r.job.id)).not.toContain(longJob);
      expect(trayIcon(rig.state, running).icon).toBe('idle');
    },
    300_000,
  );
});
