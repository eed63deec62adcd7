// A scene analysis through the analysis cache: the same .blend and add-on bytes, file paths and
// sizes, Blender build and options, in the same workspace, give the stored answer without starting
// Blender (analysis-key.ts says what the key covers). The cache never fails a validation: a store
// that cannot be read or written is logged and the analysis runs as without it.
import { analyzeScene, type AnalyzeSceneOptions, type SceneAnalysis } from '../../../blender/analysis/analyze-scene.js';
import type { PreparedProject } from '../project/job-files.js';
import { analysisCacheKey, ROOT_MARK, type AnalysisKeyInput } from './analysis-key.js';
import type { AnalysisCacheStore } from '../../ports/analysis-cache.js';

const JOB_MARK = '@@renderbridge-job-folder@@';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface CachedAnalysisInput {
  /** Where analyses are kept; absent: every analysis runs Blender (a remote worker). */
  store: AnalysisCacheStore | undefined;
  workspaceId: string;
  build: AnalysisKeyInput['build'];
  project: Pick<PreparedProject, 'root' | 'jobDir' | 'files' | 'manifest' | 'bareBlend'>;
  log: Log;
  /** Runs the analysis on a miss. Default analyzeScene. */
  analyze?: (opts: AnalyzeSceneOptions) => Promise<SceneAnalysis>;
}

/** `hit`: the stored analysis, Blender not started; `miss`: analysed and stored; `off`: no store. */
export type AnalysisCacheOutcome = 'hit' | 'miss' | 'off';

/** The path as it appears inside JSON text. */
const inJson = (p: string) => JSON.stringify(p).slice(1, -1);

function pack(analysis: SceneAnalysis, project: CachedAnalysisInput['project']): string {
  // The project folder lies inside the job's folder: replaced first, so the job's mark never splits it.
  return JSON.stringify(analysis)
    .split(inJson(project.root))
    .join(ROOT_MARK)
    .split(inJson(project.jobDir))
    .join(JOB_MARK);
}

function unpack(text: string, project: CachedAnalysisInput['project']): SceneAnalysis {
  return JSON.parse(
    text.split(JOB_MARK).join(inJson(project.jobDir)).split(ROOT_MARK).join(inJson(project.root)),
  ) as SceneAnalysis;
}

export async function analyzeWithCache(
  input: CachedAnalysisInput,
  options: AnalyzeSceneOptions,
): Promise<{ analysis: SceneAnalysis; cache: AnalysisCacheOutcome }> {
  const analyze = input.analyze ?? analyzeScene;
  const store = input.store;
  if (!store) return { analysis: await analyze(options), cache: 'off' };
  let key: string | null = null;
  try {
    key = await analysisCacheKey(
      { workspaceId: input.workspaceId, build: input.build, project: input.project, options },
      options.signal,
    );
    const stored = await store.get(input.workspaceId, key);
    if (stored !== null) return { analysis: unpack(stored, input.project), cache: 'hit' };
  } catch (err) {
    if (options.signal?.aborted) throw err;
    input.log.warn({ err }, 'analysis cache not read: analysing the scene');
  }
  const analysis = await analyze(options);
  if (key !== null) {
    const entry = {
      workspaceId: input.workspaceId,
      key,
      analysis: pack(analysis, input.project),
      createdAt: new Date().toISOString(),
    };
    await store.put(entry).catch((err: unknown) => input.log.warn({ err }, 'analysis not cached'));
  }
  return { analysis, cache: key === null ? 'off' : 'miss' };
}
