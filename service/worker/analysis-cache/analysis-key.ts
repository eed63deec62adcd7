// The key of a cached scene analysis: everything the analysis reads. Blender opens the .blend and
// the bundled add-ons' sources (their bytes: hashed here, by the service, never taken from the
// client), and of every other file of the project only whether it is there and how big it is (the
// file list, the memory estimate's sizes): those go in as path and size. The Blender build and the
// options that change the answer go in too; where the job's folder appears it is left out, so two
// jobs of the same project share a key. Another workspace never shares one (the workspace is part
// of the digest and of the store's key).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { AnalyzeSceneOptions } from '../../../blender/analysis/analyze-scene.js';
import type { BlenderBuild } from '../../../blender/builds.js';
import { projectFilePath, type PreparedProject } from '../project/job-files.js';

/** Bumped when what the key covers changes, so older entries are never read again. */
const KEY_VERSION = 1;

/** Files whose bytes the analysis reads: .blend files (and their numbered backups). */
const BLEND = /\.blend\d*$/i;

/** Placeholder of the project folder in keys and stored analyses. */
export const ROOT_MARK = '@@renderbridge-project-root@@';

export interface AnalysisKeyInput {
  workspaceId: string;
  build: Pick<BlenderBuild, 'binary' | 'kind' | 'version'>;
  project: Pick<PreparedProject, 'root' | 'files' | 'manifest' | 'bareBlend'>;
  /** The options analyzeScene gets; only those that change its answer enter the key. */
  options: AnalyzeSceneOptions;
}

async function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash, signal ? { signal } : {});
  return hash.digest('hex');
}

/** `text` with every occurrence of the project folder replaced by ROOT_MARK. */
export function withoutRoot(text: string, root: string): string {
  return text.split(root).join(ROOT_MARK);
}

/** The files entry of the key: path and size of each, and the bytes' hash of .blend and add-on files. */
async function fileFacts(project: AnalysisKeyInput['project'], signal?: AbortSignal): Promise<string[][]> {
  const addonPaths = (project.manifest?.addons ?? []).map((a) => a.path);
  const readInFull = (f: string) => BLEND.test(f) || addonPaths.some((a) => f === a || f.startsWith(`${a}/`));
  const facts: string[][] = [];
  for (const f of [...project.files].sort()) {
    const abs = projectFilePath(project, f);
    const { size } = await stat(abs);
    facts.push(readInFull(f) ? [f, String(size), await sha256File(abs, signal)] : [f, String(size)]);
  }
  return facts;
}

/** The hex digest under which this analysis is cached. Reads the project's files (see above). */
export async function analysisCacheKey(input: AnalysisKeyInput, signal?: AbortSignal): Promise<string> {
  const o = input.options;
  const options = {
    file: o.file,
    scene: o.scene ?? null,
    pathToFileForRender: o.pathToFileForRender ?? null,
    shownName: o.shownName ?? null,
    sandbox: o.sandbox ?? false,
    pathRemaps: o.pathRemaps ?? null,
    addons: o.addons ?? null,
  };
  const doc = {
    v: KEY_VERSION,
    workspaceId: input.workspaceId,
    build: { binary: input.build.binary, kind: input.build.kind ?? 'executable', version: input.build.version.text },
    options: JSON.parse(withoutRoot(JSON.stringify(options), input.project.root)) as unknown,
    files: await fileFacts(input.project, signal),
  };
  return createHash('sha256').update(JSON.stringify(doc)).digest('hex');
}
