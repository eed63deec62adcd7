// The add-on as an artist installs it: `npm run build:addon`'s zip, installed with Blender's own
// addon_install into a temp user scripts folder, enabled, then disabled. No daemon runs, so the
// panel must say so and how to start one.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blenderHome, buildAddonZip, runDriver, type BlenderHome } from './blender-addon.js';

const run = promisify(execFile);
let work: string;
let home: BlenderHome;
let zip: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-addon-install-'));
  home = await blenderHome(work);
  zip = await buildAddonZip(path.join(work, 'renderbridge-addon.zip'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

interface InstallResult {
  file: string;
  bl_info: { blender: number[]; name: string };
  panels: string[];
  panel_spaces: [string, string][];
  operators: string[];
  prefs: { daemon_address: string; download_folder: string };
  scene_settings: boolean;
  connection_error: string | null;
  check_poll: boolean;
}

describe('add-on zip', () => {
  it('holds renderbridge/ with __init__.py (bl_info) and blender_manifest.toml, and no caches', async () => {
    const { stdout } = await run('unzip', ['-Z1', zip]);
    const names = stdout.trim().split('\n');
    expect(names).toEqual(expect.arrayContaining(['renderbridge/__init__.py', 'renderbridge/blender_manifest.toml', 'renderbridge/daemon_client.py', 'renderbridge/dependencies.py']));
    expect(names.every((n) => n.startsWith('renderbridge/') && !n.includes('__pycache__'))).toBe(true);
    const { stdout: manifest } = await run('unzip', ['-p', zip, 'renderbridge/blender_manifest.toml']);
    expect(manifest).toMatch(/^schema_version = "1\.0\.0"$/m);
    expect(manifest).toMatch(/^id = "renderbridge"$/m);
    expect(manifest).toMatch(/^blender_version_min = "4\.2\.0"$/m);
    expect(manifest).toMatch(/^network = /m);
    expect(manifest).toMatch(/^files = /m);
  });

  it('installs in headless Blender, registers its panels and operators, and says the daemon is not running', async () => {
    const result = path.join(work, 'install.json');
    const got = await runDriver<InstallResult>({ name: 'install_check', home, args: [zip, result], result });
    expect(got.file).toBe(path.join(home.scripts, 'addons', 'renderbridge', '__init__.py'));
    expect(got.bl_info.blender).toEqual([3, 4, 0]);
    expect(got.panels).toEqual(['RENDERBRIDGE_PT_render', 'RENDERBRIDGE_PT_sidebar']);
    expect(got.panel_spaces).toEqual([['PROPERTIES', 'WINDOW'], ['VIEW_3D', 'UI']]);
    expect(got.operators).toEqual(['cancel_job', 'check', 'download_job', 'open_folder', 'refresh', 'refresh_addons', 'render', 'test_connection']);
    expect(got.scene_settings).toBe(true);
    expect(got.prefs).toEqual({ daemon_address: '', download_folder: '' });
    expect(got.connection_error).toContain('daemon is not running: start it with `renderbridge daemon`');
    expect(got.connection_error).toContain(path.join(home.state, 'renderbridge', 'daemon.json'));
    expect(got.check_poll).toBe(true);
    const disabled = JSON.parse(await readFile(`${result}.disabled`, 'utf8')) as { panels: string[] };
    expect(disabled.panels).toEqual([]);
  }, 120_000);
});
