// Which Blender a binary is, from `blender --version` (one Blender start, ~0.5 s), cached per
// build (see PerBinaryCache) so a worker asks each binary once.
import { PerBinaryCache } from './binary-cache.js';
import { BlenderResultError } from './errors.js';
import { runBlender } from './run.js';

export interface BlenderVersion {
  major: number;
  minor: number;
  patch: number;
  /** As printed, e.g. `3.4.1`. */
  text: string;
}

/** Parses the first `Blender X.Y[.Z]` line of `blender --version`; undefined when there is none. */
export function parseBlenderVersion(output: string): BlenderVersion | undefined {
  const m = /^Blender (\d+)\.(\d+)(?:\.(\d+))?/m.exec(output);
  if (!m) return undefined;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  return { major, minor, patch, text: `${major}.${minor}.${patch}` };
}

/** Versions per binary (see PerBinaryCache); create one per worker. */
export class BlenderVersionCache extends PerBinaryCache<BlenderVersion> {
  constructor() {
    super((binary) => probeVersion(binary));
  }
}

async function probeVersion(binary: string): Promise<BlenderVersion> {
  // A version probe needs no host folder at all.
  const res = await runBlender({
    binary,
    args: ['--version'],
    timeoutMs: 60_000,
    lastLinesCount: 20,
    access: { write: [], read: [] },
  });
  const version = parseBlenderVersion(res.lastLines.join('\n'));
  if (res.exitCode !== 0 || !version) {
    throw new BlenderResultError(`cannot read the version of ${binary}`, {
      exitCode: res.exitCode,
      lastLines: res.lastLines,
    });
  }
  return version;
}

/** `blender --version`, parsed; pass a cache to avoid a Blender start (~0.5 s) per call. */
export function blenderVersion(binary = 'blender', cache?: BlenderVersionCache): Promise<BlenderVersion> {
  return cache ? cache.get(binary) : probeVersion(binary);
}
