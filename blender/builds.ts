// The Blender builds of a worker. A worker may have several installed (a scene saved with 5.2
// renders with 5.2; see version-routing.ts for which build takes a file); the operator names them
// with `--blender PATH` (repeatable) and/or env vars `RENDERBRIDGE_BLENDER_<MAJOR>_<MINOR>=PATH`;
// `blender` from PATH is always a candidate. A PATH is an executable, an unpacked release folder or
// a system root (build-kind.ts). Everything here is pure except probeBuilds, which asks each build
// its version.

import { buildKind, findInPath, type BuildKind } from './build-kind.js';
import { type BlenderVersion, type BlenderVersionCache, blenderVersion } from './version.js';

export interface BuildCandidate {
  binary: string;
  /** Where it was configured; `--blender` paths come first and the first one is the default. */
  source: 'config' | 'env' | 'path';
  /** `major.minor` declared by an env var name, checked against the probed version. */
  declared?: string;
}

export interface BlenderBuild {
  /** What run.ts starts: an executable, a release folder or a root (the field keeps its old name). */
  binary: string;
  /** How it starts (build-kind.ts). Default `executable` where absent (a bare name found in PATH). */
  kind?: BuildKind;
  version: BlenderVersion;
  /** The build used when no version is asked for. Exactly one build of a list has it. */
  isDefault: boolean;
}

const ENV_PATTERN = /^RENDERBRIDGE_BLENDER_(\d+)_(\d+)$/;

export interface CandidateSources {
  /** `--blender PATH` values, in the order given. Default none. */
  blenderPaths?: readonly string[];
  /** Environment to read `RENDERBRIDGE_BLENDER_X_Y` and PATH from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Whether PATH's `blender` is a candidate. Default true. */
  fromPath?: boolean;
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
  const onPath = src.fromPath === false ? undefined : findInPath('blender', env.PATH);
  if (onPath) add({ binary: onPath, source: 'path' });
  return out;
}

/** Parses `"4.2"`, `"4.2.1"` or `[4, 2, 1]` into major/minor; undefined when unusable. */
export function parseRequestedVersion(
  v: string | readonly number[] | undefined,
): { major: number; minor: number } | undefined {
  if (v === undefined) return undefined;
  const parts = typeof v === 'string' ? v.trim().split('.').map(Number) : [...v];
  const [major, minor] = parts;
  if (major === undefined || minor === undefined || !Number.isInteger(major) || !Number.isInteger(minor))
    return undefined;
  return { major, minor };
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
export async function probeBuilds(
  candidates: readonly BuildCandidate[],
  cache?: BlenderVersionCache,
): Promise<ProbedBuilds> {
  const builds: BlenderBuild[] = [];
  const problems: string[] = [];
  for (const c of candidates) {
    try {
      const version = await blenderVersion(c.binary, cache);
      if (c.declared && c.declared !== `${version.major}.${version.minor}`) {
        problems.push(`${c.binary} is declared as ${c.declared} but reports ${version.text}; using ${version.text}`);
      }
      builds.push({
        binary: c.binary,
        kind: c.binary.includes('/') ? buildKind(c.binary) : 'executable',
        version,
        isDefault: builds.length === 0,
      });
    } catch (err) {
      problems.push(`${c.binary} (${c.source}) is unusable: ${(err as Error).message}`);
    }
  }
  return { builds, problems };
}

/** `major.minor` of a build, the unit in which render results are comparable. */
export const minorVersion = (b: BlenderBuild) => `${b.version.major}.${b.version.minor}`;

/** The local build for a requirement: the highest patch of that `major.minor`, if any. */
export function buildFor(builds: readonly BlenderBuild[], blender: string | undefined): BlenderBuild | undefined {
  if (!blender) return undefined;
  return builds
    .filter((b) => minorVersion(b) === blender)
    .sort((a, b) => a.version.patch - b.version.patch)
    .pop();
}
