// The TypeScript side of remap_paths.py: the packer's path remaps handed to a Blender script (the
// analysis and render setup apply them before reading any path), and the summary the analysis
// prints of what they did. The script itself runs as a sibling module of those scripts.
import type { PathRemap } from '../../shared/pack/manifest.js';

/** Remaps of a packed project and the absolute folder it was unpacked to (archive paths start there). */
export interface PathRemapSpec {
  root: string;
  remaps: readonly PathRemap[];
}

/** What analyze.py's `RB_REMAP` line says: remaps applied, those that failed (first 20), those that matched nothing. */
export interface RemapSummary {
  remapped: number;
  failed: Array<{ id: string; from: string; reason: string }>;
  unused: number;
}

/** Parses `RB_REMAP {json}`; undefined for other lines or a summary that does not fit. */
export function parseRemapLine(line: string): RemapSummary | undefined {
  if (!line.startsWith('RB_REMAP ')) return undefined;
  try {
    const v = JSON.parse(line.slice('RB_REMAP '.length)) as RemapSummary;
    return typeof v.remapped === 'number' && Array.isArray(v.failed) ? v : undefined;
  } catch {
    return undefined;
  }
}
