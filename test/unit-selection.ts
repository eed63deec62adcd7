// Which test files make the fast loop (`npm run test:unit`): those that need neither Blender, nor a
// server outside the test process, nor a browser. Decided from the source, so a new test joins the
// right loop by what it uses, not by a list someone has to keep: a file is heavy when it, or a test
// helper it imports (followed through relative imports inside test/), names one of the parts below.
// A file that needs none of them but takes long anyway opts out with a `// test-loop: full` line.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';

/** What makes a test file slow or dependent on the machine: each pattern names a real part. */
const HEAVY = [
  /\bstartE2E\b|buildFixture|blender-builds|\/usr\/bin\/blender|runBlender|BLENDER_BIN/, // Blender
  /postgres|redis|s3rver/i, // servers of the scale-out stack
  /playwright|chromium/i, // a browser
  /\bnetns\b|nginx|secret-tool|keyring|dbus|ffmpeg|ffprobe|bwrap|systemd-analyze/, // machine tools
  /\b(spawn|execFile|fork|exec)\(|runCli|cli-run/, // child processes (the CLI, Python)
  /^\/\/ test-loop: full\b/m, // a file that says so: needs none of these, but minutes of CPU or disk
];

/**
 * Helpers that reach PostgreSQL, Redis or S3 only when RENDERBRIDGE_TEST_STACK=scale asks for them:
 * by default they run the service in the test's process on SQLite and files, which the loop allows.
 */
const STACK_SWITCHED = [path.join('helpers', 'service.ts')];

const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The .ts file a relative import names (`./x.js` is written for `./x.ts`). */
function resolveImport(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, base]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return null;
}

/** Whether `file` or a helper under `testRoot` it reaches needs a heavy part. */
function isHeavy(file: string, testRoot: string, memo: Map<string, boolean>, seen = new Set<string>()): boolean {
  const known = memo.get(file);
  if (known !== undefined) return known;
  if (seen.has(file) || STACK_SWITCHED.some((h) => file.endsWith(path.sep + h))) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let heavy = HEAVY.some((re) => re.test(text));
  for (const m of text.matchAll(IMPORT)) {
    if (heavy) break;
    const target = resolveImport(file, m[1]!);
    if (target && target.startsWith(testRoot + path.sep)) heavy = isHeavy(target, testRoot, memo, seen);
  }
  memo.set(file, heavy);
  return heavy;
}

/** Test files of the fast loop, relative to `repoRoot` (posix separators, as vitest's include wants). */
export function unitTestFiles(repoRoot: string): string[] {
  const testRoot = path.join(repoRoot, 'test');
  const memo = new Map<string, boolean>();
  return testFiles(testRoot)
    .filter((f) => !isHeavy(f, testRoot, memo))
    .map((f) => path.relative(repoRoot, f).split(path.sep).join('/'))
    .sort();
}
