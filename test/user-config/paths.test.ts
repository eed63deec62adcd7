// The per-platform folders as pure functions of (platform, env, home), and the one-time move.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateLegacyDirs } from '../../user-config/migrate.js';
import { configFilePath, legacyDirs, platformOf, userDirs } from '../../user-config/paths.js';

describe('userDirs', () => {
  it('Linux: XDG folders, honouring XDG_CONFIG_HOME and XDG_STATE_HOME', () => {
    expect(userDirs('linux', {}, '/home/ann')).toEqual({
      config: '/home/ann/.config/renderbridge',
      state: '/home/ann/.local/state/renderbridge',
      logs: '/home/ann/.local/state/renderbridge/logs',
    });
    const d = userDirs('linux', { XDG_CONFIG_HOME: '/x/conf', XDG_STATE_HOME: '/x/state' }, '/home/ann');
    expect(d.config).toBe('/x/conf/renderbridge');
    expect(d.state).toBe('/x/state/renderbridge');
    expect(configFilePath(d, 'linux')).toBe('/x/conf/renderbridge/config.toml');
  });

  it('macOS: Application Support and Library/Logs, whatever XDG says', () => {
    expect(userDirs('darwin', { XDG_CONFIG_HOME: '/x' }, '/Users/ann')).toEqual({
      config: '/Users/ann/Library/Application Support/renderbridge',
      state: '/Users/ann/Library/Application Support/renderbridge/state',
      logs: '/Users/ann/Library/Logs/renderbridge',
    });
  });

  it('Windows: %APPDATA% for config, %LOCALAPPDATA% for state and logs, with fallbacks under the home folder', () => {
    const d = userDirs(
      'win32',
      { APPDATA: 'C:\\Users\\ann\\AppData\\Roaming', LOCALAPPDATA: 'D:\\Local' },
      'C:\\Users\\ann',
    );
    expect(d).toEqual({
      config: 'C:\\Users\\ann\\AppData\\Roaming\\renderbridge',
      state: 'D:\\Local\\renderbridge\\state',
      logs: 'D:\\Local\\renderbridge\\logs',
    });
    expect(configFilePath(d, 'win32')).toBe('C:\\Users\\ann\\AppData\\Roaming\\renderbridge\\config.toml');
    expect(userDirs('win32', {}, 'C:\\Users\\ann').state).toBe('C:\\Users\\ann\\AppData\\Local\\renderbridge\\state');
  });

  it('legacy folders are the Linux-style ones on every platform; unknown platforms count as Linux', () => {
    expect(legacyDirs('darwin', {}, '/Users/ann').state).toBe('/Users/ann/.local/state/renderbridge');
    expect(legacyDirs('win32', {}, 'C:\\Users\\ann').config).toBe('C:\\Users\\ann\\.config\\renderbridge');
    expect(platformOf('freebsd')).toBe('linux');
  });
});

describe('migrateLegacyDirs', () => {
  let root: string;
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('moves the old folders once on macOS, never over an existing one, and does nothing on Linux', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'rb-migrate-'));
    const home = root;
    const legacy = legacyDirs('darwin', {}, home);
    const current = userDirs('darwin', {}, home);
    await mkdir(legacy.config, { recursive: true });
    await writeFile(path.join(legacy.config, 'config.toml'), 'defaultProfile = "studio"\n');
    await mkdir(legacy.state, { recursive: true });
    await writeFile(path.join(legacy.state, 'daemon.json'), '{}');
    expect(await migrateLegacyDirs('linux', current, legacy)).toEqual([]);
    const moved = await migrateLegacyDirs('darwin', current, legacy);
    expect(moved.map((m) => m.to)).toEqual([current.config, current.state]);
    expect(await readFile(path.join(current.config, 'config.toml'), 'utf8')).toContain('studio');
    expect(await stat(path.join(current.state, 'daemon.json'))).toBeTruthy();
    await mkdir(legacy.config, { recursive: true });
    expect(await migrateLegacyDirs('darwin', current, legacy)).toEqual([]);
  });
});
