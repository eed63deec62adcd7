// Steps of the add-on tests: build the zip with scripts/build-addon.mjs, and run a driver script of
// test/addon/drivers in headless Blender (through runBlender) with the user scripts/config folders
// and XDG_STATE_HOME of a temp folder, so nothing touches the real home. The driver writes JSON.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { runBlender } from '../../blender/run.js';
import { startTestBridge } from '../daemon/harness.js';
import { startE2E, type E2E } from '../helpers/e2e.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `npm run build:addon`'s script, writing the zip to `out`. */
export async function buildAddonZip(out: string): Promise<string> {
  await run(process.execPath, [path.join(ROOT, 'scripts', 'build-addon.mjs'), out], { cwd: ROOT, timeout: 60_000 });
  return out;
}

export interface BlenderHome {
  /** BLENDER_USER_SCRIPTS: add-ons are installed under `addons/`. */
  scripts: string;
  config: string;
  /** XDG_STATE_HOME: the daemon writes `renderbridge/daemon.json` there, the add-on reads it. */
  state: string;
}

export async function blenderHome(dir: string): Promise<BlenderHome> {
  const home = { scripts: path.join(dir, 'user-scripts'), config: path.join(dir, 'user-config'), state: path.join(dir, 'xdg-state') };
  await Promise.all(Object.values(home).map((d) => mkdir(d, { recursive: true })));
  return home;
}

/** Runs `drivers/NAME.py` in Blender (opening `file` when given) with `args` (and `env` over the
 * inherited environment); returns the JSON it wrote to `result`. */
export async function runDriver<T>(opts: { name: string; home: BlenderHome; args: string[]; result: string; file?: string; timeoutMs?: number; env?: Record<string, string> }): Promise<T> {
  const lines: string[] = [];
  const res = await runBlender({
    binary: process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender',
    file: opts.file,
    pythonScript: fileURLToPath(new URL(`./drivers/${opts.name}.py`, import.meta.url)),
    scriptArgs: opts.args,
    env: { ...opts.env, BLENDER_USER_SCRIPTS: opts.home.scripts, BLENDER_USER_CONFIG: opts.home.config, XDG_STATE_HOME: opts.home.state },
    timeoutMs: opts.timeoutMs ?? 120_000,
    onLine: (_s, l) => lines.push(l),
  });
  if (res.exitCode !== 0) throw new Error(`driver ${opts.name} failed (exit ${res.exitCode}):\n${lines.slice(-60).join('\n')}`);
  return JSON.parse(await readFile(opts.result, 'utf8')) as T;
}

export interface AddonStack {
  work: string;
  home: BlenderHome;
  e2e: E2E;
  /** The full daemon; its state file is in the Blender home's state folder, where the add-on looks. */
  daemon: RunningBridgeDaemon;
  /** The built add-on zip. */
  zip: string;
  close(): Promise<void>;
}

/** A reference service with a worker, the full daemon and the built add-on, in one temp folder. */
export async function startAddonStack(prefix: string): Promise<AddonStack> {
  const work = await mkdtemp(path.join(tmpdir(), prefix));
  const home = await blenderHome(work);
  const e2e = await startE2E();
  const daemon = await startTestBridge({ serviceUrl: e2e.svc.baseUrl, apiKey: e2e.svc.apiKey, work, stateDir: path.join(home.state, 'renderbridge') });
  const zip = await buildAddonZip(path.join(work, 'renderbridge-addon.zip'));
  return {
    work,
    home,
    e2e,
    daemon,
    zip,
    close: async () => {
      await daemon.close();
      await e2e.svc.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}
