// The build-selection rules (pure), and probing with the real Blender plus a path that is not one.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BlenderVersion } from '../../blender/version.js';
import { BlenderVersionCache } from '../../blender/version.js';
import {
  type BlenderBuild,
  buildCandidates,
  findInPath,
  parseRequestedVersion,
  pickBuild,
  probeBuilds,
} from '../../blender/builds.js';

function v(text: string): BlenderVersion {
  const [major = 0, minor = 0, patch = 0] = text.split('.').map(Number);
  return { major, minor, patch, text: `${major}.${minor}.${patch}` };
}
function build(text: string, isDefault = false): BlenderBuild {
  return { binary: `/opt/blender-${text}/blender`, version: v(text), isDefault };
}
const builds = [build('3.4.1', true), build('3.6.5'), build('4.2.0'), build('4.2.3'), build('4.5.1')];

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

describe('pickBuild', () => {
  it('uses the default build when nothing (or nothing usable) is asked', () => {
    expect(pickBuild(builds)).toEqual({ build: builds[0], exact: true });
    expect(pickBuild(builds, 'latest')).toEqual({ build: builds[0], exact: true });
  });

  it('matches major.minor exactly, preferring the highest patch', () => {
    expect(pickBuild(builds, '4.2')).toEqual({ build: builds[3], exact: true });
    expect(pickBuild(builds, [4, 2, 0]).build.version.text).toBe('4.2.3');
    expect(pickBuild(builds, '3.4.0').build.version.text).toBe('3.4.1');
  });

  it('falls back to the closest newer build, with a note', () => {
    const p = pickBuild(builds, '4.1');
    expect(p.build.version.text).toBe('4.2.3');
    expect(p.exact).toBe(false);
    expect(p.note).toMatch(/4\.1 is not available.*4\.2\.3.*closest newer/);
    expect(pickBuild(builds, [2, 93, 0]).build.version.text).toBe('3.4.1');
  });

  it('falls back to the newest build when every build is older, with a note', () => {
    const p = pickBuild(builds, '5.0');
    expect(p.build.version.text).toBe('4.5.1');
    expect(p.note).toMatch(/5\.0 is not available.*4\.5\.1.*older/);
  });

  it('without a default flag, the newest build is the default; no builds is an error', () => {
    expect(pickBuild([build('3.4.1'), build('4.2.0')]).build.version.text).toBe('4.2.0');
    expect(() => pickBuild([])).toThrow(/no Blender build/);
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
