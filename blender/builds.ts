// Which Blender build runs a job. A worker may have several builds installed (a scene saved
// with 4.2 should render with 4.2); the operator names them with `--blender PATH` (repeatable)
// and/or env vars `RENDERBRIDGE_BLENDER_<MAJOR>_<MINOR>=/path`; `blender` from PATH is always a
// candidate. Everything here is pure except probeBuilds, which asks each binary its version.
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { type BlenderVersion, type BlenderVersionCache, blenderVersion } from './version.js';

export interface BuildCandidate {
  binary: string;
  /** Where it was configured; `--blender` paths come first and the first one is the default. */
  source: 'config' | 'env' | 'path';
  /** `major.minor` declared by an env var name, checked against the probed version. */
  declared?: string;
}

export interface BlenderBuild {
  binary: string;
  version: BlenderVersion;
  /** The build used when no version is asked for. Exactly one build of a list has it. */
  isDefault: boolean;
}

export interface PickedBuild {
  build: BlenderBuild;
  /** True when the asked major.minor was available (or nothing was asked). */
  exact: boolean;
  /** Human note for analysisWarnings / finalConfig.notes when the asked version was not available. */
  note?: string;
}

const ENV_PATTERN = /^RENDERBRIDGE_BLENDER_(\d+)_(\d+)$/;

/** Finds an executable in PATH, like `which`; undefined when absent. */
export function findInPath(name: string, pathVar: string | undefined): string | undefined {
  if (isAbsolute(name)) return name;
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface CandidateSources {
  /** `--blender PATH` values, in the order given. Default none. */
  blenderPaths?: readonly string[];
  /** Environment to read `RENDERBRIDGE_BLENDER_X_Y` and PATH from. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Candidates in priority order, without duplicates: `--blender` paths, env vars (by version), PATH's `blender`. */
export function buildCandidates(src: CandidateSources = {}): BuildCandidate[] {
  const env = src.env ?? process.env;
  const out: BuildCandidate[] = [];
  const seen = new Set<string>();
  const add = (c: BuildCandidate) => {
    if (seen.has(c.binary)) return;
    seen.add(c.binary);
    out.push(c);
  };
  for (const p of src.blenderPaths ?? []) if (p) add({ binary: p, source: 'config' });
  const fromEnv = Object.entries(env)
    .map(([k, v]) => ({ m: ENV_PATTERN.exec(k), v }))
    .filter((e): e is { m: RegExpExecArray; v: string } => e.m !== null && !!e.v)
    .map((e) => ({ major: Number(e.m[1]), minor: Number(e.m[2]), binary: e.v }))
    .sort((a, b) => b.major - a.major || b.minor - a.minor);
  for (const e of fromEnv) add({ binary: e.binary, source: 'env', declared: `${e.major}.${e.minor}` });
  const onPath = findInPath('blender', env.PATH);
  if (onPath) add({ binary: onPath, source: 'path' });
  return out;
}

/** Parses `"4.2"`, `"4.2.1"` or `[4, 2, 1]` into major/minor; undefined when unusable. */
export function parseRequestedVersion(v: string | readonly number[] | undefined): { major: number; minor: number } | undefined {
  if (v === undefined) return undefined;
  const parts = typeof v === 'string' ? v.trim().split('.').map(Number) : [...v];
  const [major, minor] = parts;
  if (major === undefined || minor === undefined || !Number.isInteger(major) || !Number.isInteger(minor)) return undefined;
  return { major, minor };
}

function cmp(a: BlenderVersion, b: { major: number; minor: number; patch?: number }): number {
  return a.major - b.major || a.minor - b.minor || a.patch - (b.patch ?? 0);
}

/**
 * Picks the build for a scene. `requested` is `hostVersionForRender` (`"4.2"`) or the file's
 * `hostFileVersion` (`[4, 2, 0]`). Rule:
 * 1. nothing (or nothing parseable) asked: the default build;
 * 2. a build with the same major.minor (the highest patch among them);
 * 3. else the OLDEST major.minor newer than asked (its highest patch): Blender reads older files
 *    well, and the closest newer version changes the least;
 * 4. else (every build is older) the NEWEST build: it reads the most of a newer file.
 * Cases 3 and 4 carry a `note`. Throws when `builds` is empty.
 */
export function pickBuild(builds: readonly BlenderBuild[], requested?: string | readonly number[]): PickedBuild {
  if (builds.length === 0) throw new Error('no Blender build available');
  const byVersion = [...builds].sort((a, b) => cmp(a.version, b.version));
  const fallback = builds.find((b) => b.isDefault) ?? byVersion[byVersion.length - 1]!;
  const want = parseRequestedVersion(requested);
  if (!want) return { build: fallback, exact: true };
  const asked = `${want.major}.${want.minor}`;
  const same = byVersion.filter((b) => b.version.major === want.major && b.version.minor === want.minor);
  if (same.length > 0) return { build: same[same.length - 1]!, exact: true };
  const first = byVersion.find((b) => cmp(b.version, { ...want, patch: 0 }) > 0);
  // Within the chosen major.minor, the highest patch (bug fixes only).
  const newer = first && byVersion.filter((b) => b.version.major === first.version.major && b.version.minor === first.version.minor).pop();
  if (newer) {
    return {
      build: newer,
      exact: false,
      note: `Blender ${asked} is not available on this worker; using ${newer.version.text}, the closest newer version.`,
    };
  }
  const newest = byVersion[byVersion.length - 1]!;
  return {
    build: newest,
    exact: false,
    note:
      `Blender ${asked} is not available on this worker; using ${newest.version.text}, the newest available, ` +
      'which is older: features added after it are ignored or may render differently.',
  };
}

export interface ProbedBuilds {
  builds: BlenderBuild[];
  /** Candidates that could not be used or whose declared version differs, for the worker's log. */
  problems: string[];
}

/**
 * Asks each candidate its version (through version.ts) and keeps the ones that answer. The first
 * usable candidate is the default. Pass the worker's version cache to probe each binary once.
 */
export async function probeBuilds(candidates: readonly BuildCandidate[], cache?: BlenderVersionCache): Promise<ProbedBuilds> {
  const builds: BlenderBuild[] = [];
  const problems: string[] = [];
  for (const c of candidates) {
    try {
      const version = await blenderVersion(c.binary, cache);
      if (c.declared && c.declared !== `${version.major}.${version.minor}`) {
        problems.push(`${c.binary} is declared as ${c.declared} but reports ${version.text}; using ${version.text}`);
      }
      builds.push({ binary: c.binary, version, isDefault: builds.length === 0 });
    } catch (err) {
      problems.push(`${c.binary} (${c.source}) is unusable: ${(err as Error).message}`);
    }
  }
  return { builds, problems };
}
