// The build-selection rules (pure), and probing with the real Blender plus a path that is not one.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BlenderVersion } from '../../blender/version.js';
import { BlenderVersionCache } from '../../blender/version.js';
import { buildCandidates, parseRequestedVersion, probeBuilds } from '../../blender/builds.js';
import { testBuild, usableBuilds } from '../helpers/blender-builds.js';
import { findInPath } from '../../blender/build-kind.js';
import { canOpen, noBuildMessage, routeVersion } from '../../blender/version-routing.js';

function v(text: string): BlenderVersion {
  const [major = 0, minor = 0, patch = 0] = text.split('.').map(Number);
  return { major, minor, patch, text: `${major}.${minor}.${patch}` };
}

describe('buildCandidates', () => {
  it('orders --blender paths, then env builds newest first, then PATH, without duplicates', () => {
    const env = {
      PATH: '/usr/bin:/bin',
      RENDERBRIDGE_BLENDER_3_6: '/opt/b36/blender',
      RENDERBRIDGE_BLENDER_4_2: '/opt/b42/blender',
      RENDERBRIDGE_BLENDER_X: '/ignored',
      RENDERBRIDGE_BLENDER_4_5: '',
      OTHER: '/opt/other',
    };
    const c = buildCandidates({ blenderPaths: ['/opt/custom/blender', '/opt/b36/blender'], env });
    expect(c.map((x) => [x.binary, x.source, x.declared])).toEqual([
      ['/opt/custom/blender', 'config', undefined],
      ['/opt/b36/blender', 'config', undefined],
      ['/opt/b42/blender', 'env', '4.2'],
      ...(findInPath('blender', env.PATH) ? [[findInPath('blender', env.PATH), 'path', undefined]] : []),
    ]);
  });

  it('finds blender in PATH only when it is there', () => {
    expect(findInPath('blender', '/nonexistent-dir')).toBeUndefined();
    expect(buildCandidates({ env: { PATH: '/nonexistent-dir' } })).toEqual([]);
    expect(findInPath('/abs/blender', '')).toBe('/abs/blender');
  });
});

describe('parseRequestedVersion', () => {
  it('reads "4.2", "4.2.1" and [4, 2, 0]; rejects the rest', () => {
    expect(parseRequestedVersion('4.2')).toEqual({ major: 4, minor: 2 });
    expect(parseRequestedVersion('4.2.1')).toEqual({ major: 4, minor: 2 });
    expect(parseRequestedVersion([4, 2, 0])).toEqual({ major: 4, minor: 2 });
    expect(parseRequestedVersion('4')).toBeUndefined();
    expect(parseRequestedVersion('four.two')).toBeUndefined();
    expect(parseRequestedVersion(undefined)).toBeUndefined();
  });
});

describe('routeVersion (which build opens a file)', () => {
  const farm = [v('3.4.1'), v('4.3.2'), v('5.2.2'), v('5.2.0')];
  it('takes the same major.minor, its highest patch, and says nothing more', () => {
    expect(routeVersion(farm, { major: 5, minor: 2 })).toEqual({ version: v('5.2.2'), minor: '5.2', exact: true });
    expect(routeVersion(farm, { major: 3, minor: 4 })?.minor).toBe('3.4');
  });
  it('else the nearest newer build, with a note naming both versions', () => {
    const r = routeVersion(farm, { major: 4, minor: 1 });
    expect(r).toMatchObject({ minor: '4.3', exact: false });
    expect(r?.note).toMatch(/saved with Blender 4\.1.*Blender 4\.3\.2, the closest newer build/);
    expect(routeVersion(farm, { major: 2, minor: 93 })?.minor).toBe('3.4');
    expect(routeVersion(farm, { major: 3, minor: 6 })?.minor).toBe('4.3');
  });
  it('never gives a 5.x file to 4.x or 3.x, nor a 4.x file to 3.x', () => {
    expect(routeVersion([v('3.4.1'), v('4.3.2')], { major: 5, minor: 0 })).toBeUndefined();
    expect(routeVersion([v('3.4.1')], { major: 4, minor: 3 })).toBeUndefined();
    expect(canOpen(v('4.3.2'), { major: 5, minor: 2 })).toBe(false);
    expect(canOpen(v('5.2.2'), { major: 3, minor: 4 })).toBe(true);
  });
  it('within a major, an older minor opens a newer file, with a note that it is older', () => {
    const r = routeVersion([v('3.4.1'), v('4.3.2')], { major: 4, minor: 5 });
    expect(r).toMatchObject({ minor: '4.3', exact: false });
    expect(r?.note).toMatch(/newest build that opens it.*older/);
  });
  it('an asked version wins when the file allows it; one that cannot open the file is overruled, saying why', () => {
    expect(routeVersion(farm, { major: 3, minor: 4 }, { major: 4, minor: 3 })).toMatchObject({
      minor: '4.3',
      exact: true,
    });
    const r = routeVersion(farm, { major: 5, minor: 2 }, { major: 3, minor: 4 });
    expect(r).toMatchObject({ minor: '5.2', exact: false });
    expect(r?.note).toMatch(/Blender 3\.4 was asked for, but it cannot open a file saved with Blender 5\.2/);
  });
  it('says what to install when nothing opens the file', () => {
    const m = noBuildMessage({ major: 5, minor: 2 }, [v('3.4.1'), v('4.3.2')]);
    expect(m).toMatch(/saved with Blender 5\.2/);
    expect(m).toMatch(/Blender 3\.4\.1, Blender 4\.3\.2/);
    expect(m).toMatch(/install Blender 5\.2 or newer.*--blender/);
  });
});

describe('probeBuilds', () => {
  it('keeps the builds that answer, first one default, and explains the others', async () => {
    const blender = findInPath(process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender', process.env.PATH);
    expect(blender).toBeDefined();
    const missing = join('/nonexistent-dir', 'blender');
    const cache = new BlenderVersionCache();
    const res = await probeBuilds(
      [
        { binary: missing, source: 'config' },
        { binary: blender!, source: 'env', declared: '9.9' },
      ],
      cache,
    );
    expect(res.builds).toHaveLength(1);
    expect(res.builds[0]).toMatchObject({ binary: blender, isDefault: true });
    expect(res.problems.join('\n')).toMatch(/nonexistent-dir.*unusable/);
    expect(res.problems.join('\n')).toMatch(/declared as 9\.9 but reports/);
  });
});

describe('builds of every kind', () => {
  const roots = usableBuilds('probing Blender roots').filter((b) => b.kind === 'root');

  it.each(roots.map((r) => [r.minor, r.path] as const))(
    'a Debian root of Blender %s is probed as a root with its version',
    async (minor, root) => {
      const res = await probeBuilds([{ binary: root, source: 'config' }], new BlenderVersionCache());
      expect(res.problems).toEqual([]);
      expect(res.builds[0]).toMatchObject({ binary: root, kind: 'root', isDefault: true });
      expect(`${res.builds[0]!.version.major}.${res.builds[0]!.version.minor}`).toBe(minor);
    },
  );

  it('an unpacked release folder (a folder holding its own `blender`) is started through that executable', async () => {
    // A release archive unpacks to a folder whose `blender` finds its libraries beside itself; the
    // machine's Blender behind a script stands in for one (official archives cannot be fetched here).
    const dir = await mkdtemp(join(tmpdir(), 'rb-release-'));
    try {
      const system = testBuild('3.4').path;
      await writeFile(join(dir, 'blender'), `#!/bin/sh\nexec ${system} "$@"\n`, { mode: 0o755 });
      const res = await probeBuilds([{ binary: dir, source: 'config' }], new BlenderVersionCache());
      expect(res.problems).toEqual([]);
      expect(res.builds[0]).toMatchObject({ binary: dir, kind: 'release' });
      expect(res.builds[0]!.version.major).toBe(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a folder without a Blender is refused, saying what was looked for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rb-empty-'));
    try {
      const res = await probeBuilds([{ binary: dir, source: 'config' }], new BlenderVersionCache());
      expect(res.builds).toEqual([]);
      expect(res.problems.join('\n')).toMatch(
        /folder without a Blender: expected an unpacked release .*\/blender\) or a system root .*usr\/bin\/blender\)/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
