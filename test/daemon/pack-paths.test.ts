// Where the packer puts a file in the archive (daemon/pack/archive-paths.ts): inside the project root
// in place, outside it mirrored under _external/, and the root itself chosen from the main file and
// its own relative targets.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mirrorPath, placePath, projectRoot } from '../../daemon/pack/archive-paths.js';
import { dep } from './pack-helpers.js';

const MAIN = '/home/ann/proj/shots/sh010.blend';

describe('mirrorPath: the place of a file outside the project, below _external/', () => {
  it('drops the leading slash of a POSIX path and normalises it', () => {
    expect(mirrorPath('/mnt/assets/wood.png', path.posix)).toBe('mnt/assets/wood.png');
    expect(mirrorPath('/mnt/assets/../lib/./x.blend', path.posix)).toBe('mnt/lib/x.blend');
  });

  it('turns drive letters, UNC shares and long-path prefixes into folders', () => {
    expect(mirrorPath('C:\\maps\\a.png', path.win32)).toBe('C/maps/a.png');
    expect(mirrorPath('c:/maps/b.png', path.win32)).toBe('C/maps/b.png');
    expect(mirrorPath('\\\\server\\share\\tex\\a.png', path.win32)).toBe('UNC/server/share/tex/a.png');
    expect(mirrorPath('\\\\?\\D:\\deep\\a.png', path.win32)).toBe('D/deep/a.png');
    expect(mirrorPath('\\\\?\\UNC\\nas\\lib\\a.png', path.win32)).toBe('UNC/nas/lib/a.png');
  });
});

describe('projectRoot', () => {
  it('widens to the common folder of the main file and its own // targets only', () => {
    const deps = [
      dep({ path: '//../tex/wood.png', absolute: '/home/ann/proj/tex/wood.png', kind: 'image', blendFile: MAIN }),
      // An absolute path and a library's own relative path never move the root.
      dep({ path: '/mnt/lib/rock.png', absolute: '/mnt/lib/rock.png', kind: 'image', blendFile: MAIN }),
      dep({ path: '//../../x.png', absolute: '/mnt/x.png', kind: 'image', blendFile: '/mnt/lib/props/props.blend' }),
    ];
    expect(projectRoot(MAIN, deps, path.posix)).toBe('/home/ann/proj');
    expect(projectRoot(MAIN, deps.slice(1), path.posix)).toBe('/home/ann/proj/shots');
  });

  it('takes a cache folder itself, not its parent', () => {
    const cache = dep({
      path: '//../../cache',
      absolute: '/home/ann/cache',
      kind: 'cache',
      pattern: 'directory',
      blendFile: MAIN,
    });
    expect(projectRoot(MAIN, [cache], path.posix)).toBe('/home/ann');
  });
});

describe('placePath', () => {
  it('places a path of the root itself as the empty path', () => {
    expect(placePath('/home/ann/proj', '/home/ann/proj', path.posix)).toBe('');
    expect(placePath('/home/ann/proj/a/b.png', '/home/ann/proj', path.posix)).toBe('a/b.png');
    expect(placePath('/home/ann/project2/b.png', '/home/ann/proj', path.posix)).toBe(
      '_external/home/ann/project2/b.png',
    );
  });
});
