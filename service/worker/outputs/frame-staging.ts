// Frames shared through object storage, for workers on several machines. A chunk's finished
// files are kept in the worker's own `out/` folder; when render chunks and the finalize task of
// a job may run on different machines (storage shared by all, e.g. S3), each finished file is
// also staged in storage. A chunk retried elsewhere fetches its frames that are already staged
// instead of rendering them again, and finalize fetches every staged file before publishing.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { text } from 'node:stream/consumers';
import { ObjectExistsError, type ObjectStorage } from '../../ports/storage.js';
import { formatRunLine, parseRunLines, type RenderRun } from '../../domain/normalized-seconds.js';
import { frameOfFile, listFiles, type OutputLayout } from './chunk-files.js';

type Area = 'frames' | 'composite';

/** Every staged object of a job lives under this prefix; it is deleted once the job has ended. */
export function stagingPrefix(jobId: string): string {
  return `staging/${jobId}`;
}

// Relative paths come from the scene (any characters, any depth): one base64url segment keeps
// them intact through the key alphabet, and the leading letter satisfies key rules.
export const encodeRel = (rel: string) => `r${Buffer.from(rel, 'utf8').toString('base64url')}`;
export const decodeRel = (seg: string) => Buffer.from(seg.slice(1), 'base64url').toString('utf8');

const areaDir = (out: OutputLayout, area: Area) => (area === 'frames' ? out.frames : out.composite);

export class FrameStaging {
  /** Keys this instance staged or found staged: each file is sent once per chunk run. */
  private readonly staged = new Set<string>();

  constructor(
    private readonly storage: ObjectStorage,
    private readonly prefix: string,
  ) {}

  /** Copies files of `out/` (relative to `frames/` or `composite/`) into storage; already staged ones are kept. */
  async stage(out: OutputLayout, area: Area, rels: readonly string[]): Promise<void> {
    for (const rel of rels) {
      const key = `${this.prefix}/${area}/${encodeRel(rel)}`;
      if (this.staged.has(key)) continue;
      const file = path.join(areaDir(out, area), ...rel.split('/'));
      try {
        await this.storage.putFile(key, file);
      } catch (err) {
        // Staged by an earlier attempt: puts are atomic, so the object is whole.
        if (!(err instanceof ObjectExistsError)) throw err;
      }
      this.staged.add(key);
    }
  }

  /** Stages every file of `out/` belonging to one of `frames`. */
  async stageFrames(out: OutputLayout, frames: ReadonlySet<number> | undefined): Promise<void> {
    for (const area of ['frames', 'composite'] as const) {
      const rels = (await listFiles(areaDir(out, area))).filter(
        (rel) => !frames || frames.has(frameOfFile(rel) ?? NaN),
      );
      await this.stage(out, area, rels);
    }
  }

  /**
   * Fetches staged files missing from `out/` (only those of `frames`, when given). Each lands
   * under a temporary name first, so a crash never leaves half a file among the finished ones.
   */
  async fetchMissing(out: OutputLayout, frames?: ReadonlySet<number>): Promise<number> {
    let fetched = 0;
    for (const area of ['frames', 'composite'] as const) {
      for (const { key, size } of await this.storage.list(`${this.prefix}/${area}/`)) {
        const rel = decodeRel(key.slice(key.lastIndexOf('/') + 1));
        if (frames && !frames.has(frameOfFile(rel) ?? NaN)) continue;
        const target = path.join(areaDir(out, area), ...rel.split('/'));
        const have = await stat(target).catch(() => undefined);
        this.staged.add(key);
        if (have?.size === size) continue;
        await mkdir(path.dirname(target), { recursive: true });
        const tmp = `${target}.fetching`;
        try {
          await pipeline(await this.storage.get(key), createWriteStream(tmp));
          await rename(tmp, target);
        } finally {
          await rm(tmp, { force: true });
        }
        fetched++;
      }
    }
    return fetched;
  }

  /** Records one Blender run: its seconds and the device it really used (billing sums every run, on every machine). */
  async addRun(label: string, run: RenderRun): Promise<void> {
    const key = `${this.prefix}/seconds/${encodeRel(label)}`;
    await this.storage.put(key, Readable.from([Buffer.from(formatRunLine(run))])).catch((err: unknown) => {
      if (!(err instanceof ObjectExistsError)) throw err;
    });
  }

  /** Every recorded run; a bare number (recorded before devices were) counts on `legacyDevice`. */
  async runs(legacyDevice: RenderRun['device']): Promise<RenderRun[]> {
    const runs: RenderRun[] = [];
    for (const { key } of await this.storage.list(`${this.prefix}/seconds/`))
      runs.push(...parseRunLines(await text(await this.storage.get(key)), legacyDevice));
    return runs;
  }

  async remove(): Promise<void> {
    await this.storage.deletePrefix(this.prefix);
  }
}

/** File in the job's folder recording each Blender run's render seconds and device (formatRunLine lines). */
export const RENDER_SECONDS_FILE = 'render-seconds.log';

/** Reads a local run log (formatRunLine lines); the single-machine path. */
export async function readRunsFile(file: string, legacyDevice: RenderRun['device']): Promise<RenderRun[]> {
  return parseRunLines(await readFile(file, 'utf8').catch(() => ''), legacyDevice);
}
