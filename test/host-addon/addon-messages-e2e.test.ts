// What the artist sees in Blender when Check or Render on farm cannot end well, each cause made real,
// on every build of the Blender matrix: headless Blender runs the installed add-on
// (test/host-addon/drivers/messages.py) against real bridge daemons and reference services, and one
// Blender session causes every message in turn (a Blender start costs seconds). No job renders, so
// the services have no worker. The daemons:
//   main     the artist's daemon, on a service that accepts uploads (and never validates: no worker);
//   skewed   on a service whose upload URLs have always expired (as a clock far ahead sees them);
//   dead     whose farm URL is a port where nothing listens;
//   broken   whose pack folder cannot be made (its parent is a file).
// Each message says what happened and what to do; only SERVICE_UNREACHABLE speaks of the service URL.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { daemonCall } from '../daemon/harness.js';
import { blenderHome, buildAddonZip, installAddon, runDriver } from './blender-addon.js';

interface Op {
  result: string[];
  error?: string;
}
interface Step {
  op: Op | null;
  activity: {
    step: string;
    message: string;
    error: string | null;
    finished: boolean;
    packId: string | null;
    submissionId: string | null;
  } | null;
  /** The Renderbridge panel's lines (alert ones start with `!`). */
  panel: string[];
  path?: string;
  dirty?: boolean;
}
interface Result {
  connection_error: string | null;
  dirty_at_open: boolean;
  steps: Record<string, Step>;
}

/** A port that was just free: nothing listens there. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
}

/** The panel's alert lines as one text (panels.wrap cut the message at spaces). */
const alerts = (s: Step) =>
  s.panel
    .filter((l) => l.startsWith('!'))
    .map((l) => l.slice(1))
    .join(' ');
const oneLine = (text: string) => text.split(/\s+/).filter(Boolean).join(' ');

describe.each(usableBuilds('add-on failure messages'))('add-on failure messages on Blender $minor', (build) => {
  let work: string;
  let result: Result;
  let texture: string;
  let deadPort: number;
  const services: TestService[] = [];
  const daemons: RunningBridgeDaemon[] = [];
  let main: RunningBridgeDaemon;

  /** A full daemon (startBridgeDaemon) whose state file lies in `xdg`/renderbridge, where the add-on looks. */
  async function bridge(
    xdg: string,
    serviceUrl: string,
    apiKey: string,
    workDir: string,
    fastRetries = false,
  ): Promise<RunningBridgeDaemon> {
    const config = defaultDaemonConfig(
      {},
      {
        serviceUrl,
        port: 0,
        stateDir: path.join(xdg, 'renderbridge'),
        workDir,
        downloadsDir: path.join(work, 'out'),
        pollActiveMs: 250,
        pollIdleMs: 1000,
        hotFolder: null,
        webhookSecret: null,
      },
    );
    // The dead farm's retries, made short: each try meets the same closed port.
    const d = await startBridgeDaemon(config, {
      keychain: null,
      env: { RENDERBRIDGE_API_KEY: apiKey },
      logger: false,
      version: '1.2.3-test',
      ...(fastRetries ? { clientOptions: { baseDelayMs: 10, maxDelayMs: 50 } } : {}),
    });
    daemons.push(d);
    return d;
  }

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'rb-addon-messages-'));
    const home = await blenderHome(work, build);
    const zip = await buildAddonZip(path.join(work, 'renderbridge-addon.zip'));
    await installAddon(home, zip);
    const svc = await startTestService();
    const skewedSvc = await startTestService({ uploadUrlTtlSeconds: -3600 });
    services.push(svc, skewedSvc);
    deadPort = await closedPort();
    const xdg = (name: string) => path.join(work, 'xdg', name);
    main = await bridge(home.state, svc.baseUrl, svc.apiKey, path.join(work, 'main-packs'));
    await bridge(xdg('skewed'), skewedSvc.baseUrl, skewedSvc.apiKey, path.join(work, 'skewed-packs'));
    await bridge(
      xdg('dead'),
      `http://127.0.0.1:${deadPort}/api/external/v1`,
      'rb_live_unused',
      path.join(work, 'dead-packs'),
      true,
    );
    await writeFile(path.join(work, 'not-a-folder'), 'a file where the pack folder should go');
    await bridge(xdg('broken'), svc.baseUrl, svc.apiKey, path.join(work, 'not-a-folder', 'packs'));

    const scene = path.join(work, 'scene');
    await mkdir(path.join(scene, 'textures'), { recursive: true });
    const file = path.join(scene, 'basic.blend');
    await copyFile(await buildFixture('basic'), file);
    // Bytes no service has seen: the upload must read the file to send it.
    texture = path.join(scene, 'textures', 'paint.png');
    await writeFile(texture, randomBytes(4096));
    const out = path.join(work, 'messages.json');
    const args = [
      zip,
      out,
      texture,
      xdg('nowhere'),
      xdg('skewed'),
      xdg('dead'),
      xdg('broken'),
      path.join(scene, 'elsewhere'),
    ];
    result = await runDriver<Result>({ name: 'messages', home, file, args, result: out, timeoutMs: 400_000 });
  }, 600_000);
  afterAll(async () => {
    for (const d of daemons) await d.close();
    for (const s of services) await s.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** A step that failed after the button started it: the panel's title says so, and its red lines are the error. */
  function failed(name: string, title: 'Check' | 'Render on farm'): string {
    const step = result.steps[name]!;
    expect(step.op).toEqual({ result: ['FINISHED'] });
    expect(step.activity).toMatchObject({ step: 'failed', finished: true, message: 'Failed' });
    const error = step.activity!.error!;
    expect(step.panel).toContain(`${title}: Failed`);
    expect(alerts(step)).toContain(oneLine(error));
    return error;
  }

  it('a file deleted on disk while open: the button says to save it again, and nothing is packed', () => {
    expect(result.connection_error).toBeNull();
    expect(result.dirty_at_open).toBe(false);
    const step = result.steps['gone']!;
    expect(step.op?.result).toEqual(['CANCELLED']);
    expect(step.op?.error).toContain(
      `${path.join(work, 'scene', 'basic.blend')} is no longer on disk (moved or deleted since it was ` +
        `opened), so there is nothing to pack: save it again (File > Save As), then try again.`,
    );
    expect(step.activity).toBeNull();
  });

  it('a texture repainted once packed: PACK_CHANGED naming it, pack again', () => {
    const error = failed('changed', 'Render on farm');
    expect(error).toBe(
      `PACK_CHANGED: "${texture}" was changed after the project was packed, so the farm would not render ` +
        `what was packed: pack again (press Render again), then submit.`,
    );
  });

  it(
    'the daemon stops while the pack is followed, then a daemon without that pack answers: "Could not read the ' +
      'pack", press again',
    () => {
      const unreadable = result.steps['pack-unreadable']!;
      // While nothing answers, the panel says why and keeps following the pack.
      expect(unreadable.activity).toMatchObject({ finished: false, error: null });
      expect(unreadable.activity?.message).toMatch(
        /^Could not read the pack: The renderbridge daemon is not running: start it with `renderbridge daemon` \(or start the tray app\), then try again\. \(no state file at .*nowhere\/renderbridge\/daemon\.json\)$/,
      );
      expect(
        unreadable.panel.some((l) =>
          l.startsWith('Check: Could not read the pack: The renderbridge daemon is not running'),
        ),
      ).toBe(true);
      expect(failed('pack-gone', 'Check')).toBe(
        'Could not read the pack: the daemon no longer has it (it was restarted, or the pack expired), so ' +
          'nothing was sent: press "Check" again.',
      );
    },
  );

  it('upload URLs that have always expired: SUBMISSION_FAILED, check the clock', () => {
    expect(failed('skewed', 'Check')).toMatch(
      /^SUBMISSION_FAILED: The upload stopped: .*upload URLs had expired.*\. Check that this computer's clock is right \(it may be ahead of the service's\), then submit again\.$/,
    );
  });

  it('a farm URL where nothing listens: SERVICE_UNREACHABLE naming it, check the service URL', () => {
    const error = failed('dead', 'Check');
    expect(error).toMatch(/^SERVICE_UNREACHABLE: .*: check the service URL and that the service is running\.$/);
    expect(error).toContain(`127.0.0.1:${deadPort}`);
  });

  it('a pack folder the daemon cannot make: PACK_FAILED naming it, check space and permissions', () => {
    const error = failed('broken', 'Check');
    expect(error).toMatch(
      /^PACK_FAILED: The daemon's pack folder ".*\/not-a-folder\/packs\/.*" cannot be created \(.*\); check its free space and permissions, then retry\.$/,
    );
    expect(error).not.toMatch(/service URL/);
  });

  it('the daemon restarts while the farm validates: "Could not read the submission", see Recent jobs', async () => {
    const step = result.steps['submission-gone']!;
    expect(step.activity?.submissionId).toEqual(expect.any(String));
    expect(failed('submission-gone', 'Check')).toBe(
      'Could not read the submission: the daemon no longer has it (it was restarted): see Recent jobs for ' +
        'its job; if it is not there, press "Check" again.',
    );
    // That submission did reach the main daemon, which made its job.
    const sub = (await daemonCall(main)('GET', `/submissions/${step.activity!.submissionId!}`)).json as {
      jobId: string | null;
    };
    expect(sub.jobId).toEqual(expect.any(String));
  });

  it('unsaved changes whose folder vanished: could not save, save it elsewhere', () => {
    const step = result.steps['unsaveable']!;
    expect(step.dirty).toBe(true);
    expect(step.op?.result).toEqual(['CANCELLED']);
    expect(oneLine(step.op!.error!)).toContain(`Could not save ${step.path!} (`);
    expect(step.op?.error).toContain(
      '): the farm renders the saved file, so nothing was sent. Save it where you can write (File > Save ' +
        'As), then try again.',
    );
  });
});
