// The tray's menu, tooltip and notifications (electron/core/tray-model.ts, notifications.ts) fed by a
// real daemon watching real jobs (models-harness.ts): one project renders eight frames into a chosen
// folder, another fails validation (two scenes in one archive). The Electron tray cannot run here:
// main/tray.ts and main/notifications.ts only hand these models to Electron, as main/index.ts does.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { trayIcon, trayMenu } from '../../electron/core/tray-model.js';
import type { DaemonStatus } from '../../electron/core/supervisor.js';
import { waitUntil } from '../helpers/e2e.js';
import { buildFixtureZip } from '../helpers/fixtures.js';
import { daemonCall } from '../daemon/harness.js';
import { labels, useTrayRig } from './models-harness.js';

const rig = useTrayRig();

describe('tray models from a real daemon', () => {
  it('show the render in progress, then notify completion (outputs folder) and failure (reason)', async () => {
    const { daemon, work, running, notifications, menus, tooltips } = rig;
    const call = daemonCall(daemon);
    const good = path.join(work, 'good.zip');
    const ambiguous = path.join(work, 'two-scenes.zip');
    await buildFixtureZip(['basic'], good);
    await buildFixtureZip(['basic', 'compositor'], ambiguous, 'shot');
    const outDir = path.join(work, 'shot-010');
    const renderConfig = { resolution: [64, 48], sampleCount: 4, colorManagementPreset: 'default' };
    const started = await call('POST', '/submissions', {
      pack: { path: good },
      settings: { frames: ['1-8'], renderConfig },
      outDir,
    });
    expect(started.status, started.text).toBe(202);
    const failing = await call('POST', '/submissions', { pack: { path: ambiguous }, settings: { frames: ['1'] } });
    expect(failing.status, failing.text).toBe(202);

    const failed = await waitUntil(
      'the failure notification',
      () => notifications.find((n) => n.title === 'Render failed'),
      { timeoutMs: 120_000 },
    );
    expect(failed.body).toMatch(/failed — SCENE_FILE_AMBIGUOUS: .*pathToFileForRender/);
    expect(failed).toMatchObject({ openPath: null, urgency: 'critical' });

    const done = await waitUntil(
      'the completion notification',
      () => notifications.find((n) => n.title === 'Render complete'),
      { timeoutMs: 180_000 },
    );
    expect(done).toMatchObject({
      openPath: outDir,
      urgency: 'normal',
      body: `basic.blend is done. Click to open ${outDir}.`,
    });
    // Clicking opens that folder, which exists already: the eight frames land there.
    expect((await stat(outDir)).isDirectory()).toBe(true);
    const pngs = async () => (await readdir(outDir, { recursive: true })).filter((f) => f.endsWith('.png'));
    await waitUntil('the eight frames in the outputs folder', async () => (await pngs()).length === 8, {
      timeoutMs: 60_000,
    });
    expect(notifications).toHaveLength(2);

    // While it rendered, the menu listed it as active with its progress, and the tooltip said so.
    const activeLines = menus.flatMap(labels).filter((l) => l.startsWith('basic.blend — '));
    expect(
      activeLines.some((l) => /^basic\.blend — rendering( \d+%)? \(\d\/8 frames\)$/.test(l)),
      activeLines.join('\n'),
    ).toBe(true);
    expect(tooltips.some((t) => /^Renderbridge: basic\.blend rendering/.test(t))).toBe(true);

    // Now: no active job, both under Recent (completed opens its folder, failed says why).
    const menu = trayMenu(rig.state, running, { outputsDir: path.join(work, 'outputs') });
    const l = labels(menu);
    expect(l[0]).toBe(`Daemon running (pid ${process.pid}, port ${daemon.port})`);
    expect(l).toContain('No active jobs');
    const recent = menu.filter((i) => i.kind === 'item' && /^(✓|✗) /.test(i.label));
    expect(recent).toHaveLength(2);
    expect(recent.find((i) => i.kind === 'item' && i.label === '✓ basic.blend — completed')).toMatchObject({
      action: { type: 'openFolder', path: outDir },
    });
    expect(
      recent.some(
        (i) =>
          i.kind === 'item' &&
          /^✗ two-scenes\.zip — failed: SCENE_FILE_AMBIGUOUS: The upload contains several \.blend files/.test(i.label),
      ),
      l.join('\n'),
    ).toBe(true);
    expect(l.slice(-6)).toEqual([
      'Open outputs folder',
      'Open job window',
      'Settings…',
      'Install the Blender add-on…',
      '---',
      'Quit Renderbridge',
    ]);
    expect(trayIcon(rig.state, running)).toEqual({
      icon: 'idle',
      tooltip: `Renderbridge: Daemon running (pid ${process.pid}, port ${daemon.port}), no active jobs`,
    });
    // The daemon's own state shows through when it is not running.
    const crashed: DaemonStatus = { ...running, state: 'crashed', pid: null, lastExit: 'SIGKILL', restarts: 2 };
    expect(trayIcon(rig.state, crashed)).toEqual({
      icon: 'error',
      tooltip: 'Renderbridge: Daemon stopped unexpectedly (SIGKILL); restarting (2 restarts)',
    });
    expect(
      trayMenu(rig.state, crashed, { outputsDir: '/o' }).find(
        (i) => i.kind === 'item' && i.label === 'Open job window',
      ),
    ).toMatchObject({ enabled: false });
    expect(trayMenu(rig.state, { ...running, external: true }, { outputsDir: '/o' })[0]).toEqual({
      kind: 'label',
      label: `Daemon running (pid ${process.pid}, port ${daemon.port}, started outside the app)`,
    });
  }, 300_000);
});
