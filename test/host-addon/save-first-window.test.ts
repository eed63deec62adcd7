// The add-on's "save first" warnings in a real Blender window, on every build of the matrix: Blender
// starts without -b on an Xvfb screen (a root through bubblewrap, with the X socket folder bound in)
// and test/host-addon/drivers/save_first_window.py draws the real panel in the Properties editor and
// clicks Render on farm with the mouse: for a file never saved, one with unsaved changes, and a saved
// clean one. The panel's texts are recorded as they are drawn into the window; the click's reports
// are read back from the window's Info editor; screenshots of each state are kept in the temp folder
// and named in every assertion message. No daemon runs: every warning comes before any call to one.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { findInPath, launchBuild } from '../../blender/build-kind.js';
import { usableBuilds, type TestBuild } from '../helpers/blender-builds.js';
import { blenderHome, buildAddonZip, installAddon, type BlenderHome } from './blender-addon.js';

const DRIVERS = fileURLToPath(new URL('./drivers/', import.meta.url));
const X11_SOCKETS = '/tmp/.X11-unix';

interface Activity {
  mode: string;
  step: string;
  error: string | null;
}
interface Click {
  enabled: boolean;
  at: [number, number];
}
interface Step {
  filepath: string;
  is_dirty: boolean;
  /** The panel's lines as drawn in the window (alert ones start with `!`, buttons are `<text>`). */
  panel: string[];
  shot: string;
  shot_after_click: string;
  click: Click;
  reports: string[];
  activity: Activity | null;
  file_browser?: boolean;
  still_dirty?: boolean;
  saved_meanwhile?: boolean;
  after_escape?: { still_dirty: boolean; saved_meanwhile: boolean; activity: Activity | null };
  confirmed?: { still_dirty: boolean; saved_meanwhile: boolean; reports: string[]; activity: Activity | null };
}
interface Result {
  version: string;
  error: string | null;
  steps: { never_saved: Step; unsaved_changes: Step; saved_clean: Step };
}

/** An Xvfb screen of its own (display number chosen by Xvfb), stopped by its pid. */
async function startXvfb(xvfb: string): Promise<{ display: string; stop(): void }> {
  const child: ChildProcess = spawn(xvfb, ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const display = await new Promise<string>((resolve, reject) => {
    let fd3 = '';
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
      fd3 += d.toString();
      if (fd3.includes('\n')) resolve(`:${fd3.trim()}`);
    });
    child.once('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${stderr}`)));
  });
  return { display, stop: () => child.kill('SIGTERM') };
}

/** Runs the driver in a windowed Blender of `home`'s build on `display`; resolves with its JSON. */
async function runWindowed(home: BlenderHome, display: string, zip: string, work: string): Promise<Result> {
  const result = path.join(work, 'result.json');
  const shots = path.join(work, 'shots');
  const argv = [
    '--factory-startup',
    '-noaudio',
    '--enable-event-simulate',
    '--python-exit-code',
    '3',
    '--python',
    path.join(DRIVERS, 'save_first_window.py'),
    '--',
    zip,
    result,
    shots,
    path.join(work, 'saved.blend'),
  ];
  // A root sees only what is bound in: the home and temp folder (written), the drivers, the X sockets.
  const launch = launchBuild(home.build.path, argv, { write: [work], read: [DRIVERS, X11_SOCKETS] }, { cwd: work });
  await mkdir(shots, { recursive: true });
  const child = spawn(launch.command, launch.args, {
    cwd: work,
    env: {
      PATH: process.env.PATH,
      HOME: home.dir,
      DISPLAY: display,
      BLENDER_USER_SCRIPTS: home.scripts,
      BLENDER_USER_CONFIG: home.config,
      BLENDER_USER_RESOURCES: home.resources,
      XDG_STATE_HOME: home.state,
      ...launch.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (d: Buffer) => lines.push(...d.toString().split('\n'));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  if (code !== 0 || !existsSync(result))
    throw new Error(`windowed Blender ${home.build.minor} exited ${code}:\n${lines.slice(-60).join('\n')}`);
  return JSON.parse(await readFile(result, 'utf8')) as Result;
}

const builds: TestBuild[] = usableBuilds('the save-first warnings in a Blender window');
// Without Xvfb there is no screen to open a window on: skipped here, saying so; on CI a failure.
const XVFB = findInPath('Xvfb', process.env.PATH);
if (!XVFB) {
  const why = 'the save-first warnings in a Blender window: Xvfb is not installed (apt-get install xvfb)';
  if (process.env.CI === 'true') throw new Error(why);
  console.warn(`SKIPPED: ${why}`);
}

describe.skipIf(!XVFB).each(builds)('the save-first warnings in a Blender $minor window', (build) => {
  let work: string;
  let got: Result;
  let xvfb: { display: string; stop(): void } | undefined;
  // The screenshots stay for a failed run to be looked at; a passing run leaves nothing behind.
  let failed = false;
  const keepOnFailure = (ctx: TestContext) => ctx.onTestFailed(() => void (failed = true));

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'rb-window-'));
    const home = await blenderHome(work, build);
    const zip = await buildAddonZip(path.join(work, 'renderbridge-addon.zip'));
    await installAddon(home, zip);
    xvfb = await startXvfb(XVFB!);
    try {
      got = await runWindowed(home, xvfb.display, zip, work);
    } catch (err) {
      failed = true;
      throw err;
    }
    if (got.error) {
      failed = true;
      throw new Error(`the driver failed (screenshots in ${path.join(work, 'shots')}):\n${got.error}`);
    }
  }, 300_000);
  afterAll(async () => {
    xvfb?.stop();
    if (work && !failed) await rm(work, { recursive: true, force: true });
  });

  const seen = (s: Step) => `screenshots: ${s.shot}, ${s.shot_after_click}\npanel: ${JSON.stringify(s.panel)}`;
  const oneText = (lines: string[]) => lines.join(' ');
  const saveHint = (s: Step) => s.panel.filter((l) => /\b(un)?saved?\b/i.test(l) && !l.startsWith('<'));

  it('never saved: the panel says so in red; clicking Render on farm opens Save As, saying to click again', (ctx) => {
    keepOnFailure(ctx);
    const s = got.steps.never_saved;
    expect(got.version.startsWith(build.minor), got.version).toBe(true);
    expect([s.filepath, s.is_dirty]).toEqual(['', false]);
    expect(oneText(s.panel), seen(s)).toContain(
      '!Not saved yet: save the file (File > Save As) before Check or Render !on farm.',
    );
    expect(s.panel, seen(s)).toEqual(expect.arrayContaining(['<Check>', '<Render on farm>']));
    // Not greyed out: the click is what tells the artist, with Blender's own Save As dialog.
    expect(s.click.enabled, seen(s)).toBe(true);
    expect(s.reports, seen(s)).toEqual(['Save the file first, then click "Render on farm" again.']);
    expect(s.file_browser, seen(s)).toBe(true);
    expect(s.activity, seen(s)).toBeNull();
  });

  it('unsaved changes: the panel says they are saved first; the dialog: Esc sends nothing, OK saves, sends', (ctx) => {
    keepOnFailure(ctx);
    const s = got.steps.unsaved_changes;
    expect([s.filepath, s.is_dirty], seen(s)).toEqual([path.join(work, 'saved.blend'), true]);
    expect(oneText(saveHint(s)), seen(s)).toBe(
      'Unsaved changes: Check and Render on farm save them first (the farm renders the saved file).',
    );
    // The click opens Blender's confirmation: nothing is saved or sent until it is answered.
    expect([s.click.enabled, s.reports, s.still_dirty, s.saved_meanwhile, s.activity], seen(s)).toEqual([
      true,
      [],
      true,
      false,
      null,
    ]);
    expect(s.after_escape, seen(s)).toEqual({ still_dirty: true, saved_meanwhile: false, activity: null });
    expect(s.confirmed, seen(s)).toMatchObject({ still_dirty: false, saved_meanwhile: true });
    expect(s.confirmed?.activity?.mode, seen(s)).toBe('render');
    expect(s.confirmed?.reports, seen(s)).toContain(
      'Render on farm: packing and uploading through the renderbridge daemon...',
    );
  });

  it('saved and clean: no save warning; the click goes on to pack without saving or asking', (ctx) => {
    keepOnFailure(ctx);
    const s = got.steps.saved_clean;
    expect([s.is_dirty, saveHint(s)], seen(s)).toEqual([false, []]);
    expect(s.panel, seen(s)).toContain('<Render on farm>');
    expect([s.click.enabled, s.saved_meanwhile, s.file_browser], seen(s)).toEqual([true, false, false]);
    expect(s.reports, seen(s)).toContain('Render on farm: packing and uploading through the renderbridge daemon...');
    expect(s.reports.join(' '), seen(s)).not.toMatch(/[Ss]ave/);
    // No daemon runs here: the activity then says how to start one (not a save problem).
    expect(s.activity?.mode, seen(s)).toBe('render');
    expect(s.activity?.error ?? '', seen(s)).toContain('daemon is not running');
  });
});
