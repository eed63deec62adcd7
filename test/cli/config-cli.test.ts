// `renderbridge config get|set|list|path` and the global --profile, run as a real process with a
// fresh HOME: the file is written where the platform keeps it, values are checked before
// writing, and `list` shows flag > env > profile > default with each source.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { runCli } from '../helpers/cli-run.js';

let home: string;
let env: Record<string, string>;
let file: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'rb-config-home-'));
  env = { HOME: home };
  file = path.join(home, '.config', 'renderbridge', 'config.toml');
});
afterAll(() => rm(home, { recursive: true, force: true }));

const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra });

// Every case starts several tsx processes: generous limits for a loaded 2-core machine.
describe('renderbridge config', { timeout: 120_000 }, () => {
  it('path names ~/.config/renderbridge/config.toml on Linux before it exists', async () => {
    const r = await cli(['config', 'path', '--json']);
    expect(r.code).toBe(EXIT.OK);
    expect(JSON.parse(r.stdout)).toEqual({ path: file, exists: false });
  });

  it(
    'set writes the active profile atomically, creating the folder, and refuses a bad value without touching ' +
      'the file',
    async () => {
      expect((await cli(['config', 'set', 'serviceUrl', 'http://127.0.0.2:8420'])).code).toBe(EXIT.OK);
      expect((await cli(['--profile', 'studio', 'config', 'set', 'serviceUrl', 'http://farm:8420'])).code).toBe(
        EXIT.OK,
      );
      expect((await cli(['config', 'set', 'overrides', '{ sampleCount = 16 }', '--profile', 'studio'])).code).toBe(
        EXIT.OK,
      );
      const before = await readFile(file, 'utf8');
      expect(before).toContain('[profiles.studio]');
      const bad = await cli(['config', 'set', 'serviceUrl', 'farm:8420']);
      expect(bad.code).toBe(EXIT.USAGE);
      expect(bad.stderr).toContain('serviceUrl (from the command line)');
      expect((await cli(['config', 'set', 'sevriceUrl', 'http://x'])).code).toBe(EXIT.USAGE);
      expect((await cli(['config', 'set', 'overrides', '{ sampleCount = "many" }'])).code).toBe(EXIT.USAGE);
      expect(await readFile(file, 'utf8')).toBe(before);
    },
  );

  it('list and get show flag > env > profile > default, each with its source', async () => {
    const fromProfile = JSON.parse((await cli(['config', 'list', '--json'])).stdout);
    expect(fromProfile.profile).toEqual({ value: 'default', source: 'default' });
    expect(fromProfile.settings.serviceUrl).toEqual({
      value: 'http://127.0.0.2:8420/api/external/v1',
      source: `profile "default" in ${file}`,
    });
    expect(fromProfile.settings.blender).toEqual({ value: 'blender', source: 'default' });

    const viaEnv = JSON.parse(
      (await cli(['config', 'get', 'serviceUrl', '--json'], { RENDERBRIDGE_PROFILE: 'studio' })).stdout,
    );
    expect(viaEnv).toEqual({
      key: 'serviceUrl',
      value: 'http://farm:8420/api/external/v1',
      source: `profile "studio" in ${file}`,
    });
    const envUrl = JSON.parse(
      (await cli(['config', 'get', 'serviceUrl', '--json'], { RENDERBRIDGE_SERVICE_URL: 'http://env-farm:1' })).stdout,
    );
    expect(envUrl.source).toBe('env RENDERBRIDGE_SERVICE_URL');
    const flagged = JSON.parse(
      (await cli(['config', 'get', 'profile', '--json', '--profile', 'default'], { RENDERBRIDGE_PROFILE: 'studio' }))
        .stdout,
    );
    expect(flagged).toEqual({ key: 'profile', value: 'default', source: 'flag --profile' });

    expect((await cli(['config', 'set', 'defaultProfile', 'studio'])).code).toBe(EXIT.OK);
    const text = (await cli(['config', 'list'])).stdout;
    expect(text).toContain(`profile: studio  (defaultProfile in ${file})`);
    expect(text).toMatch(/overrides\s+\{"sampleCount":16\}/);
  });

  it('a bad value is an error naming the setting and its source, never a fallback', async () => {
    const port = await cli(['daemon', '--print-state'], { RENDERBRIDGE_DAEMON_PORT: 'eighty' });
    expect(port.code).toBe(EXIT.USAGE);
    expect(port.stderr).toContain('daemonPort (from env RENDERBRIDGE_DAEMON_PORT): "eighty" is not a port number');
    const missing = await cli(['config', 'list'], { RENDERBRIDGE_PROFILE: 'nope' });
    expect(missing.code).toBe(EXIT.USAGE);
    expect(missing.stderr).toContain('profile "nope" (from env RENDERBRIDGE_PROFILE) is not in');
    await writeFile(file, '[profiles.default]\nvideo = "sometimes"\n');
    const broken = await cli(['config', 'list']);
    expect(broken.code).toBe(EXIT.USAGE);
    expect(broken.stderr).toContain(`${file}:2: "profiles.default.video"`);
  });

  it('--help shows the global --profile with its variable', async () => {
    const r = await cli(['--help']);
    expect(r.stdout).toMatch(/--profile <name>[\s\S]*env:\s+RENDERBRIDGE_PROFILE/);
  });
});
