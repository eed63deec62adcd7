// Steps of the add-on tests, on every build of the Blender matrix (test/helpers/blender-builds.ts):
// build the zip with scripts/build-addon.mjs, install it as an artist's Blender does (3.4: a legacy
// add-on, installed by the driver with Blender's addon_install; 4.2+: an extension, installed with
// Blender's own `blender -c extension install-file -r user_default -e ZIP`), and run a driver script
// of test/host-addon/drivers in headless Blender. Every run goes through runBlender (blender/run.ts), so a
// build in a Debian root starts in bubblewrap and sees only the folders bound here. The user
// scripts, config and resources folders and XDG_STATE_HOME are a temp folder's, so nothing touches
// the real home. The driver writes JSON.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { runBlender } from '../../blender/run.js';
import { startTestBridge } from '../daemon/harness.js';
import { testBuild, type TestBuild } from '../helpers/blender-builds.js';
import { startE2E, type E2E } from '../helpers/e2e.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DRIVERS = fileURLToPath(new URL('./drivers/', import.meta.url));

/** Runs `npm run build:addon`'s script, writing the zip to `out`. */
export async function buildAddonZip(out: string): Promise<string> {
  await run(process.execPath, [path.join(ROOT, 'scripts', 'build-addon.mjs'), out], { cwd: ROOT, timeout: 60_000 });
  return out;
}

/** Whether `build` installs the zip as an extension (Blender 4.2+) rather than a legacy add-on. */
export function installsAsExtension(build: TestBuild): boolean {
  const [major, minor] = build.minor.split('.').map(Number) as [number, number];
  return major > 4 || (major === 4 && minor >= 2);
}

/** The add-on's Python module once enabled in `build`. */
export function addonModule(build: TestBuild): string {
  return installsAsExtension(build) ? 'bl_ext.user_default.renderbridge' : 'renderbridge';
}

export interface BlenderHome {
  /** The Blender build whose runs use this home. */
  build: TestBuild;
  /** The home's folder: the runs' working folder, writable inside a root. */
  dir: string;
  /** BLENDER_USER_SCRIPTS: legacy add-ons are installed under `addons/`. */
  scripts: string;
  config: string;
  /** BLENDER_USER_RESOURCES (4.2+): the extension lands in `extensions/user_default/renderbridge`. */
  resources: string;
  /** XDG_STATE_HOME: the daemon writes `renderbridge/daemon.json` there, the add-on reads it. */
  state: string;
}

export async function blenderHome(dir: string, build: TestBuild = testBuild('3.4')): Promise<BlenderHome> {
  const folders = {
    scripts: path.join(dir, 'user-scripts'),
    config: path.join(dir, 'user-config'),
    resources: path.join(dir, 'user-resources'),
    state: path.join(dir, 'xdg-state'),
  };
  await Promise.all(Object.values(folders).map((d) => mkdir(d, { recursive: true })));
  return { build, dir, ...folders };
}

function homeEnv(home: BlenderHome): Record<string, string> {
  return {
    BLENDER_USER_SCRIPTS: home.scripts,
    BLENDER_USER_CONFIG: home.config,
    BLENDER_USER_RESOURCES: home.resources,
    XDG_STATE_HOME: home.state,
  };
}

/**
 * Installs the zip into `home` as an extension with Blender's own command (4.2+); returns its output
 * lines. For a legacy build it does nothing: the driver installs it with addon_install.
 */
export async function installAddon(home: BlenderHome, zip: string): Promise<string[]> {
  if (!installsAsExtension(home.build)) return [];
  try {
    return await installOnce(home, zip);
  } catch (err) {
    // Seen twice in loaded full runs, never alone: Blender 4.3/5.2 exited 0 after "could not get
    // a list of mounted file-systems" without its "Installed" line. Not understood yet; one more
    // try tells that apart from an add-on that does not install (which fails both). The first try
    // had installed it all the same: the second says "Reinstalled" (seen on 5.2, 2026-11-28).
    console.warn(`installing the add-on again: ${(err as Error).message.split('\n').slice(0, 3).join(' / ')}`);
    return installOnce(home, zip);
  }
}

async function installOnce(home: BlenderHome, zip: string): Promise<string[]> {
  const lines: string[] = [];
  const res = await runBlender({
    binary: home.build.path,
    cwd: home.dir,
    preScriptArgs: ['--command', 'extension', 'install-file', '-r', 'user_default', '-e', zip],
    env: homeEnv(home),
    access: { write: [home.dir], read: [path.dirname(zip)] },
    timeoutMs: 120_000,
    onLine: (_s, l) => lines.push(l),
  });
  if (res.exitCode !== 0 || !lines.some((l) => /\b(Installed|Reinstalled) "renderbridge"/.test(l))) {
    throw new Error(
      `extension install-file failed on Blender ${home.build.minor} ` +
        `(exit ${res.exitCode}):\n${lines.slice(-40).join('\n')}`,
    );
  }
  return lines;
}

/**
 * Runs `drivers/NAME.py` in the home's Blender (opening `file` when given, with `blenderArgs` such
 * as `--online-mode` before the script) with `args` (and `env` over the allow-listed environment);
 * returns the JSON it wrote to `result`. Inside a root the run may write the home's folder, the
 * file's and the result's, and `writable`.
 */
export async function runDriver<T>(opts: {
  name: string;
  home: BlenderHome;
  args: string[];
  result: string;
  file?: string;
  blenderArgs?: string[];
  timeoutMs?: number;
  env?: Record<string, string>;
  writable?: string[];
}): Promise<T> {
  const lines: string[] = [];
  const { home } = opts;
  const res = await runBlender({
    binary: home.build.path,
    cwd: home.dir,
    file: opts.file,
    preScriptArgs: opts.blenderArgs,
    pythonScript: path.join(DRIVERS, `${opts.name}.py`),
    scriptArgs: opts.args,
    env: { ...opts.env, ...homeEnv(home) },
    access: {
      write: [
        home.dir,
        path.dirname(opts.result),
        ...(opts.file ? [path.dirname(opts.file)] : []),
        ...(opts.writable ?? []),
      ],
      read: [DRIVERS],
    },
    timeoutMs: opts.timeoutMs ?? 120_000,
    onLine: (_s, l) => lines.push(l),
  });
  if (res.exitCode !== 0)
    throw new Error(
      `driver ${opts.name} failed on Blender ${home.build.minor} ` +
        `(exit ${res.exitCode}):\n${lines.slice(-60).join('\n')}`,
    );
  return JSON.parse(await readFile(opts.result, 'utf8')) as T;
}

export interface AddonStack {
  work: string;
  /** The Blender home with the add-on installed for the stack's build. */
  home: BlenderHome;
  e2e: E2E;
  /** The full daemon; its state file is in the Blender home's state folder, where the add-on looks. */
  daemon: RunningBridgeDaemon;
  /** The built add-on zip. */
  zip: string;
  close(): Promise<void>;
}

/**
 * A reference service with a worker, the full daemon and the built add-on installed for `build`, in
 * one temp folder. The farm has the machine's Blender and, for a root, that build too: a file the
 * artist's Blender saves must open on the farm (a 5.x file does not open in 3.4).
 */
export async function startAddonStack(prefix: string, build: TestBuild = testBuild('3.4')): Promise<AddonStack> {
  const work = await mkdtemp(path.join(tmpdir(), prefix));
  const home = await blenderHome(work, build);
  const system = testBuild('3.4');
  const e2e = await startE2E(build.path === system.path ? {} : { blenderPaths: [system.path, build.path] });
  const daemon = await startTestBridge({
    serviceUrl: e2e.svc.baseUrl,
    apiKey: e2e.svc.apiKey,
    work,
    stateDir: path.join(home.state, 'renderbridge'),
  });
  const zip = await buildAddonZip(path.join(work, 'renderbridge-addon.zip'));
  const close = async () => {
    await daemon.close();
    await e2e.svc.close();
    await rm(work, { recursive: true, force: true });
  };
  try {
    await installAddon(home, zip);
  } catch (err) {
    await close();
    throw err;
  }
  return { work, home, e2e, daemon, zip, close };
}
