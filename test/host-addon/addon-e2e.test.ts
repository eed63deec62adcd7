// The add-on against every real part, on every build of the Blender matrix (3.4 as a legacy add-on,
// 4.3 and 5.2 as an extension, in their Debian roots): a reference service with a worker (whose
// farm has that build too), the bridge daemon (startBridgeDaemon, its state file in the
// XDG_STATE_HOME Blender gets), and headless Blender running the add-on's operators from the
// installed zip (test/host-addon/drivers/farm.py pumps the add-on's timer tick by hand). Check stops
// before upload on missing files, then shows the analysis; Render on farm ends with the frames in
// the download folder; Cancel cancels. In 4.2+ these runs have Blender's online access off (its
// default headless): the add-on still works, since it only talks to the daemon over loopback.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig } from '../../daemon/config.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import type { E2E } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { buildPackProject } from '../helpers/pack-fixture.js';
import { daemonCall } from '../daemon/harness.js';
import {
  blenderHome,
  installAddon,
  installsAsExtension,
  runDriver,
  startAddonStack,
  type AddonStack,
  type BlenderHome,
} from './blender-addon.js';

interface Activity {
  mode: string;
  step: string;
  message: string;
  error: string | null;
  finished: boolean;
  missing: string[];
  warnings: { code: string; message: string; blocking: boolean }[];
  jobId: string | null;
  outDir: string | null;
  submissionId: string | null;
}
interface JobRow {
  status: string;
  label: string;
  outDir: string | null;
  download: string | null;
}
interface FarmResult {
  online_access: boolean | null;
  /** What the Renderbridge panel showed at the end (labels, `!` first when in alert). */
  panel: string[];
  health: { apiKeyConfigured: boolean } | null;
  connection_error: string | null;
  first?: string[];
  first_activity?: Activity;
  second?: string[];
  ops?: string[];
  cancel?: string[];
  activity: Activity;
  addons?: { module: string; path: string; selected: boolean }[];
  job?: JobRow;
  before?: JobRow;
  files?: string[];
  /** The progress lines the panel showed while packing and uploading, in order, each once. */
  transfers?: string[];
  test_ops?: string[];
  connection_test?: [string, string];
}

describe.each(usableBuilds('add-on operators end to end'))(
  'add-on operators on Blender $minor against the daemon and the reference service',
  (build) => {
    let e2e: E2E;
    let daemon: RunningBridgeDaemon;
    let work: string;
    let home: BlenderHome;
    let zip: string;
    let stack: AddonStack | undefined;

    beforeAll(async () => {
      stack = await startAddonStack('rb-addon-e2e-', build);
      ({ work, home, e2e, daemon, zip } = stack);
    }, 180_000);
    afterAll(() => stack?.close());

    /** A private copy of a fixture (the add-on saves the file it submits). */
    async function copyOf(name: 'basic' | 'missing-texture', folder: string): Promise<string> {
      const dir = path.join(work, folder);
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `${name}.blend`);
      await copyFile(await buildFixture(name), file);
      return file;
    }

    async function farm(
      file: string,
      scenario: string,
      extra: string[] = [],
      timeoutMs = 300_000,
    ): Promise<FarmResult> {
      const result = path.join(work, `${scenario}-${path.basename(file)}.json`);
      return runDriver<FarmResult>({
        name: 'farm',
        home,
        file,
        args: [zip, scenario, result, ...extra],
        result,
        timeoutMs,
      });
    }

    async function submissions(): Promise<{ id: string; jobId: string | null }[]> {
      const res = await daemonCall(daemon)('GET', '/submissions');
      return (res.json as { submissions: { id: string; jobId: string | null }[] }).submissions;
    }

    async function jobOf(id: string): Promise<Record<string, unknown>> {
      const res = await daemonCall(daemon)('GET', `/jobs/${id}`);
      expect(res.status, res.text).toBe(200);
      return (res.json as { job: Record<string, unknown> }).job;
    }

    it('Check reports the missing texture before uploading anything, then shows the analysis warnings', async () => {
      const file = await copyOf('missing-texture', 'check');
      const before = (await submissions()).length;
      const got = await farm(file, 'check-missing');
      expect(got.health?.apiKeyConfigured).toBe(true);
      // Blender 4.2+ ran with online access off: the daemon on loopback answered all the same.
      expect(got.online_access).toBe(installsAsExtension(build) ? false : null);
      expect(got.first).toEqual(['CANCELLED']);
      expect(got.first_activity?.step).toBe('missing');
      expect(got.first_activity?.missing).toEqual(['//textures/does-not-exist.png']);
      expect(got.first_activity?.message).toContain('nothing was uploaded');
      // Only the second Check ("Continue anyway") reached the daemon.
      const all = await submissions();
      expect(all).toHaveLength(before + 1);
      expect(got.second).toEqual(['FINISHED']);
      expect(got.activity.error).toBeNull();
      expect(got.activity.step).toBe('done');
      expect(all.map((s) => s.jobId)).toContain(got.activity.jobId);
      const missingFiles = got.activity.warnings.find((w) => w.code === 'MISSING_FILES');
      expect(missingFiles?.blocking).toBe(false);
      expect(missingFiles?.message).toContain('Image MissingTex');
      expect((await jobOf(got.activity.jobId!)).status).toBe('validated');
      // The result names the farm that answered, and Test connection reaches it through the daemon.
      expect(
        got.activity.message.startsWith(`Check done on ${e2e.svc.baseUrl} (profile "default"): `),
        got.activity.message,
      ).toBe(true);
      expect(got.test_ops).toEqual(['FINISHED']);
      expect(got.connection_test).toEqual([
        'INFO',
        `${e2e.svc.baseUrl} answered: the farm accepts the API key of profile "default".`,
      ]);
      expect(got.panel).toEqual(
        expect.arrayContaining([`Check: ${got.activity.message}`, 'Connected: daemon 1.2.3-test']),
      );
    }, 300_000);

    it(
      'Check on the packing fixture collects inside Blender: one missing file, the rest packed, the chosen ' +
        'add-on bundled',
      async () => {
        const project = await buildPackProject(path.join(work, 'pack-project'));
        await mkdir(path.join(home.scripts, 'addons'), { recursive: true });
        await writeFile(
          path.join(home.scripts, 'addons', 'rb_helper_addon.py'),
          "bl_info = {'name': 'RB helper', 'blender': (3, 4, 0), 'category': 'Render'}\n\ndef register():\n    " +
            'pass\n\ndef unregister():\n    pass\n',
        );
        const got = await farm(project.main, 'check-missing', ['', 'rb_helper_addon']);
        expect(got.first).toEqual(['CANCELLED']);
        expect(got.first_activity?.missing).toEqual(['//../textures/missing.png']);
        expect(got.addons).toEqual([
          { module: 'rb_helper_addon', path: path.join(home.scripts, 'addons', 'rb_helper_addon.py'), selected: true },
        ]);
        expect(got.activity.error).toBeNull();
        expect(got.activity.step).toBe('done');
        expect(got.activity.warnings.map((w) => w.code)).toContain('MISSING_FILES');
        expect(got.activity.warnings.filter((w) => w.blocking)).toEqual([]);
        const job = await jobOf(got.activity.jobId!);
        const preflight = job.uploadPreflight as {
          blendFiles: string[];
          packerManifestPreview: { bundledAddons: unknown[] };
        };
        expect(preflight.blendFiles).toEqual(expect.arrayContaining(['scenes/main.blend', 'libs/props.blend']));
        expect(JSON.stringify(preflight.packerManifestPreview.bundledAddons)).toContain('rb_helper_addon');
      },
      300_000,
    );

    it('Render on farm of frames 1-3 ends with the 3 frames in the download folder', async () => {
      const file = await copyOf('basic', 'render');
      const downloads = path.join(work, 'my-downloads');
      const got = await farm(file, 'render', [downloads]);
      expect(got.online_access).toBe(installsAsExtension(build) ? false : null);
      expect(got.ops).toEqual(['FINISHED']);
      expect(got.activity.error).toBeNull();
      expect(got.activity.step).toBe('done');
      expect(path.dirname(got.activity.outDir!)).toBe(downloads);
      expect(got.activity.outDir).toMatch(/\/basic-\d{8}-\d{6}$/);
      expect(got.files?.filter((f) => f.endsWith('.png'))).toHaveLength(3);
      // The pack ran in the daemon's background (POST /packs), followed by the panel until ready.
      expect(got.transfers?.[0], JSON.stringify(got.transfers)).toMatch(/^Pack(ing|ed)\b/);
      expect(got.job).toMatchObject({ status: 'completed', download: 'done', outDir: got.activity.outDir });
      expect(got.panel).toEqual(
        expect.arrayContaining([
          `Render on farm: Rendered; frames downloaded to ${got.activity.outDir}`,
          got.job!.label,
        ]),
      );
      const job = await jobOf(got.activity.jobId!);
      expect(job.requestedConfig).toMatchObject({
        frameRanges: ['1-3'],
        activeCamera: 'CamB',
        activeViewLayer: 'Main',
        notes: 'from the add-on test',
      });
    }, 300_000);

    it('Cancel on a rendering job cancels it on the farm', async () => {
      const file = await copyOf('basic', 'cancel');
      const got = await farm(file, 'cancel', [path.join(work, 'cancel-downloads')]);
      expect(got.ops).toEqual(['FINISHED']);
      expect(got.before?.status).toBe('rendering');
      expect(got.cancel).toEqual(['FINISHED']);
      expect(got.job?.status).toBe('canceled');
      expect((await jobOf(got.activity.jobId!)).status).toBe('canceled');
      expect(got.activity.step).toBe('failed');
      expect(got.activity.error).toContain('JOB_CANCELED');
    }, 300_000);

    it('Check with a daemon that has no API key says so and how to set one', async () => {
      const otherHome = await blenderHome(path.join(work, 'no-key'), build);
      await installAddon(otherHome, zip);
      const keyless = await startBridgeDaemon(
        defaultDaemonConfig(
          {},
          {
            serviceUrl: e2e.svc.baseUrl,
            port: 0,
            stateDir: path.join(otherHome.state, 'renderbridge'),
            workDir: path.join(work, 'no-key', 'packs'),
            downloadsDir: path.join(work, 'no-key', 'out'),
            hotFolder: null,
            webhookSecret: null,
          },
        ),
        { keychain: null, env: {}, logger: false, version: '1.2.3-test' },
      );
      try {
        const file = await copyOf('basic', 'no-key-scene');
        const result = path.join(work, 'no-key.json');
        const got = await runDriver<FarmResult>({
          name: 'farm',
          home: otherHome,
          file,
          args: [zip, 'no-key', result],
          result,
        });
        expect(got.health?.apiKeyConfigured).toBe(false);
        expect(got.ops).toEqual(['FINISHED']);
        expect(got.activity.step).toBe('failed');
        expect(got.activity.error).toMatch(
          /^NO_API_KEY: No API key is configured: store one with the tray app \(OS keychain\) or set RENDERBRIDGE_API_KEY/,
        );
        expect(got.panel).toContain('!No API key set');
      } finally {
        await keyless.close();
      }
    }, 120_000);
  },
);
