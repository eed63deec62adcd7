// The Blender builds the Blender-facing suites run on, as a matrix: Debian bookworm's 3.4 (the
// machine's `blender`), and 4.3 and 5.2 from the Debian roots scripts/blender-roots.sh prepares
// once per machine (npm test runs it first). Each build is given to code exactly as an operator
// gives it to the service: the executable, or the root's folder (started through bubblewrap).
// A root that is missing skips its suites outside CI, saying why; with CI=true it fails them.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findInPath } from '../../blender/build-kind.js';

export interface TestBuild {
  /** `3.4`, `4.3`, `5.2`: the build's major.minor, also the test titles' label. */
  minor: string;
  /** What an operator passes with `--blender`: an executable or a root folder. */
  path: string;
  kind: 'executable' | 'root';
  /** Why the build cannot be used here; undefined when it can. */
  missing?: string;
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The root folders of scripts/blender-roots.sh, in its order (trixie, sid). */
function rootFolders(): string[] {
  const out = execFileSync('bash', [path.join(REPO, 'scripts/blender-roots.sh'), '--print'], { encoding: 'utf8' });
  return out.trim().split('\n');
}

let cached: TestBuild[] | undefined;

/** Every build of the matrix, the system one first. */
export function testBuilds(): TestBuild[] {
  if (cached) return cached;
  const system = process.env.RENDERBRIDGE_TEST_BLENDER ?? findInPath('blender', process.env.PATH);
  const [trixie, sid] = rootFolders();
  const root = (minor: string, folder: string): TestBuild => ({
    minor,
    path: folder,
    kind: 'root',
    ...(existsSync(path.join(folder, '.renderbridge-root'))
      ? {}
      : { missing: `the Blender ${minor} root ${folder} is not built (run: bash scripts/blender-roots.sh)` }),
  });
  cached = [
    {
      minor: '3.4',
      path: system ?? 'blender',
      kind: 'executable',
      ...(system ? {} : { missing: 'no blender on PATH (apt-get install blender)' }),
    },
    root('4.3', trixie!),
    root('5.2', sid!),
  ];
  return cached;
}

/**
 * The builds whose suites run here. A missing one is left out with a printed reason, or, with
 * CI=true, makes this throw: on CI every build of the matrix must be there.
 */
export function usableBuilds(what: string): TestBuild[] {
  const builds = testBuilds();
  for (const b of builds.filter((x) => x.missing)) {
    const message = `${what} on Blender ${b.minor}: ${b.missing}`;
    if (process.env.CI === 'true') throw new Error(message);
    console.warn(`SKIPPED: ${message}`);
  }
  return builds.filter((b) => !b.missing);
}

/** One build of the matrix by major.minor (for suites that need a particular one). */
export function testBuild(minor: '3.4' | '4.3' | '5.2'): TestBuild {
  return testBuilds().find((b) => b.minor === minor)!;
}
