import type { RequestedRenderConfig } from '../../shared/api/render-config.js';
import { MOVIE_OUTPUT_FORMATS } from '../../shared/api/enums.js';
import type { ErrorDetail } from '../../shared/api/error-body.js';
import type { JobRecord } from '../ports/jobs.js';

/**
 * Checks a render request against what validation found: a camera or view layer must exist in
 * the scene. Returns the problems, each naming the valid choices.
 */
export function checkAgainstAnalysis(
  rec: JobRecord,
  cfg: Pick<RequestedRenderConfig, 'activeCamera' | 'activeViewLayer'>,
): ErrorDetail[] {
  const out = rec.job.analysis?.output;
  if (!out) return [];
  const problems: ErrorDetail[] = [];
  const cameras = out.sceneCameras?.map((c) => c.objectName);
  if (cfg.activeCamera !== undefined && cameras && !cameras.includes(cfg.activeCamera)) {
    problems.push({
      code: 'unknown_camera',
      path: ['body', 'requestedRenderConfig', 'activeCamera'],
      message: `No camera "${cfg.activeCamera}" in the scene; choose one of: ${cameras.join(', ') || '(none)'}`,
    });
  }
  const layers = out.viewLayers?.map((l) => l.name);
  if (cfg.activeViewLayer !== undefined && layers && !layers.includes(cfg.activeViewLayer)) {
    problems.push({
      code: 'unknown_view_layer',
      path: ['body', 'requestedRenderConfig', 'activeViewLayer'],
      message: `No view layer "${cfg.activeViewLayer}" in the scene; choose one of: ${layers.join(', ') || '(none)'}`,
    });
  }
  return problems;
}

/** Renders always produce image sequences: movie formats become PNG frames (render rule 4). */
export function normaliseOutputFormat(cfg: RequestedRenderConfig): RequestedRenderConfig {
  if (cfg.outputFormat && MOVIE_OUTPUT_FORMATS.has(cfg.outputFormat)) {
    return { ...cfg, outputFormat: 'PNG', outputMediaType: 'IMAGE' };
  }
  return cfg;
}
