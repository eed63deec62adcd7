// What a render must produce, computed from the analysis' scene metadata and the frame list:
// the spec's `finalConfig.expectedOutputs`, and the exact file names Blender writes per frame so
// the runtime can check that every frame was produced exactly once. Naming rules were measured
// with Blender 3.4 (see docs/environment.md and test/fixtures/logs/blender-3.4-stereo-fileoutput.txt):
//   camera output `-o OUT/f_####`: f_0001.png; stereo views: f_0001_L.png, f_0001_R.png
//   File Output node slot `beauty_`: beauty_0001.png; slot `mask`: mask0001.png; `sub/shot_##_v`:
//   sub/shot_09_v.jpg; per view: beauty_0001_L.png; OPEN_EXR_MULTILAYER node: base_path0001.exr,
//   one file for all slots (per view in stereo: base_path0001_L.exr). The same on 4.3 and 5.2.
import type { z } from 'zod';
import type { ExpectedOutputs as ExpectedOutputsSchema } from '../../shared/api/analysis.js';
import type { SceneMetadata } from '../../shared/api/scene.js';
import { MOVIE_OUTPUT_FORMATS } from '../../shared/api/enums.js';

export type ExpectedOutputs = z.infer<typeof ExpectedOutputsSchema>;
export type ExpectedView = ExpectedOutputs['views'][number];
export type ExpectedCategory = ExpectedOutputs['categories'][number];

export const EXPECTED_OUTPUTS_SCHEMA_VERSION = 1;

/** Extensions Blender accepts per format; the first is the one it appends (BKE_image_path_ext_from_imformat). */
const EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  PNG: ['.png'],
  JPEG: ['.jpg', '.jpeg'],
  JPEG2000: ['.jp2', '.j2c'],
  BMP: ['.bmp'],
  TARGA: ['.tga'],
  TARGA_RAW: ['.tga'],
  TIFF: ['.tif', '.tiff'],
  OPEN_EXR: ['.exr'],
  OPEN_EXR_MULTILAYER: ['.exr'],
  HDR: ['.hdr'],
  WEBP: ['.webp'],
  IRIS: ['.rgb'],
  CINEON: ['.cin'],
  DPX: ['.dpx'],
};

/** `path` with Blender's extension for `format` appended unless it already ends with an accepted one. */
export function withExtension(path: string, format: string): string {
  const exts = EXTENSIONS[format] ?? ['.png'];
  const lower = path.toLowerCase();
  return exts.some((e) => lower.endsWith(e)) ? path : `${path}${exts[0]}`;
}

/**
 * Blender's BLI_path_frame: the last run of `#` in the file-name part becomes the zero-padded
 * frame; without `#`, the frame is appended with 4 digits.
 */
export function framePath(pattern: string, frame: number): string {
  const slash = pattern.lastIndexOf('/');
  const name = pattern.slice(slash + 1);
  const m = /#+(?=[^#]*$)/.exec(name);
  const pad = (n: number) => (frame < 0 ? '-' + String(-frame).padStart(n - 1, '0') : String(frame).padStart(n, '0'));
  if (!m) return `${pattern}${pad(4)}`;
  const at = slash + 1 + m.index;
  return pattern.slice(0, at) + pad(m[0].length) + pattern.slice(at + m[0].length);
}

/** Inserts a view suffix before the extension, as Blender does (f_0001.png + _L -> f_0001_L.png). */
function withViewSuffix(fileName: string, ext: string, suffix: string): string {
  return suffix ? fileName.slice(0, fileName.length - ext.length) + suffix + ext : fileName;
}

export interface OutputPlanOptions {
  /** Camera output pattern relative to the output folder, as given to `-o`. Default `f_####`. */
  cameraPattern?: string;
  /** Scene whose stereo settings apply. Default: the active scene in `scenes`, else the first entry. */
  sceneName?: string;
}

interface PlannedOutput {
  category: ExpectedCategory;
  /** File pattern (before frame and extension): camera pattern, or node-relative slot path. */
  pattern: string;
  ext: string;
}

type SceneInput = Pick<
  SceneMetadata,
  | 'outputFormat'
  | 'stereoscopySettings'
  | 'compositeOutputNodes'
  | 'useCompositing'
  | 'compositionNodeTreeEnabled'
  | 'scenes'
>;

/** The stereo settings of the scene being rendered: `sceneName`, else the active scene, else the first entry. */
function stereoFor(scene: SceneInput, sceneName?: string) {
  const all = scene.stereoscopySettings ?? [];
  const wanted = sceneName ?? scene.scenes?.find((s) => s.is_active)?.name;
  return all.find((s) => s.scene_name === wanted) ?? all[0];
}

/**
 * Active views: none (mono, no suffix) unless multiview is on with two or more enabled views; in
 * STEREO_3D setup only `left`/`right` count (BKE_scene_multiview_num_views_get).
 */
export function activeViews(scene: SceneInput, sceneName?: string): ExpectedView[] {
  const st = stereoFor(scene, sceneName);
  if (!st?.use_multiview) return [];
  const views = st.views.filter(
    (v) => v.use && (st.views_format !== 'STEREO_3D' || v.name === 'left' || v.name === 'right'),
  );
  if (views.length < 2) return [];
  return views.map((v) => ({ name: v.name, fileSuffix: v.file_suffix, cameraSuffix: v.camera_suffix }));
}

/** The render output writes one file per view unless its packing (`views_output`) is STEREO_3D or MULTIVIEW. */
function cameraWritesPerView(scene: SceneInput, sceneName?: string): boolean {
  return (stereoFor(scene, sceneName)?.views_output ?? 'INDIVIDUAL') === 'INDIVIDUAL';
}

/** Renders always write image sequences: movie formats become PNG (render rule 4). */
function imageFormat(format: string | undefined): string {
  if (!format || (MOVIE_OUTPUT_FORMATS as ReadonlySet<string>).has(format)) return 'PNG';
  return format;
}

function plan(
  scene: SceneInput,
  frameCount: number,
  opts: OutputPlanOptions,
): { views: ExpectedView[]; outputs: PlannedOutput[] } {
  const views = activeViews(scene, opts.sceneName);
  const perView = (n: boolean) => (n && views.length > 0 ? views : []);
  const outputs: PlannedOutput[] = [];
  const camFormat = imageFormat(scene.outputFormat);
  const camViews = perView(cameraWritesPerView(scene, opts.sceneName));
  outputs.push({
    category: {
      kind: 'camera',
      format: camFormat,
      views: camViews,
      expectedFileCount: frameCount * Math.max(1, camViews.length),
    },
    pattern: opts.cameraPattern ?? 'f_####',
    ext: (EXTENSIONS[camFormat] ?? ['.png'])[0] as string,
  });
  // File Output nodes only run when the compositor does (use_compositing and use_nodes).
  if (scene.useCompositing === false || scene.compositionNodeTreeEnabled === false) return { views, outputs };
  (scene.compositeOutputNodes ?? []).forEach((node, nodeIndex) => {
    const format = imageFormat(node.format);
    const ext = (EXTENSIONS[format] ?? ['.png'])[0] as string;
    const base = { kind: 'composite' as const, format, nodeIndex, nodeName: node.name, nodeLabel: node.label };
    if (format === 'OPEN_EXR_MULTILAYER') {
      // One file per frame (and per view of a stereo render: `layers_0001_L.exr`, as Blender 3.4
      // to 5.2 write it by default) holding every slot as a layer.
      const prefix = node.base_path.slice(node.base_path.lastIndexOf('/') + 1);
      const nodeViews = perView(true);
      outputs.push({
        category: { ...base, views: nodeViews, expectedFileCount: frameCount * Math.max(1, nodeViews.length) },
        pattern: prefix,
        ext,
      });
      return;
    }
    for (const slot of node.slots) {
      const slotViews = perView(true);
      outputs.push({
        category: {
          ...base,
          slotName: slot.path || slot.name,
          views: slotViews,
          expectedFileCount: frameCount * Math.max(1, slotViews.length),
        },
        pattern: slot.path,
        ext,
      });
    }
  });
  return { views, outputs };
}

/**
 * `finalConfig.expectedOutputs` for rendering `frames` of `scene` (scene metadata with the render overrides applied).
 */
export function computeExpectedOutputs(
  scene: SceneInput,
  frames: readonly number[],
  opts: OutputPlanOptions = {},
): ExpectedOutputs {
  const frameCount = new Set(frames).size;
  const { views, outputs } = plan(scene, frameCount, opts);
  const categories = outputs.map((o) => o.category);
  const sum = (kind: 'camera' | 'composite') =>
    categories.filter((c) => c.kind === kind).reduce((n, c) => n + c.expectedFileCount, 0);
  const cameraFiles = sum('camera');
  const compositeFiles = sum('composite');
  return {
    schemaVersion: EXPECTED_OUTPUTS_SCHEMA_VERSION,
    timelineFrames: frameCount,
    viewMultiplier: Math.max(1, views.length),
    views,
    categories,
    totals: { files: cameraFiles + compositeFiles, cameraFiles, compositeFiles },
  };
}

/** One file Blender writes for a frame. */
export interface ExpectedFile {
  kind: 'camera' | 'composite';
  /**
   * `/`-separated path: camera files relative to the `-o` folder (`f_0001_L.png`); compositor
   * files relative to the node's base path taken as a folder (`beauty_0001.png`,
   * `sub/shot_09_v.jpg`), except multilayer EXR nodes, whose base path is folder + name prefix:
   * base `/out/layers_` gives `layers_0009.exr` in `/out/`.
   */
  relativePath: string;
  /** View name (`left`) when the file is one view of a multiview render, else null. */
  view: string | null;
  nodeIndex?: number;
  nodeName?: string;
  slotName?: string;
}

/** The exact files Blender writes for `frame`, in a stable order (camera first, then nodes and slots). */
export function expectedFileNames(scene: SceneInput, frame: number, opts: OutputPlanOptions = {}): ExpectedFile[] {
  const { outputs } = plan(scene, 1, opts);
  const files: ExpectedFile[] = [];
  for (const o of outputs) {
    const name = withExtension(framePath(o.pattern, frame), o.category.format);
    const ext = name.slice(name.lastIndexOf('.'));
    const extra =
      o.category.kind === 'composite'
        ? { nodeIndex: o.category.nodeIndex, nodeName: o.category.nodeName, slotName: o.category.slotName }
        : {};
    if (o.category.views.length === 0) files.push({ kind: o.category.kind, relativePath: name, view: null, ...extra });
    for (const v of o.category.views) {
      files.push({
        kind: o.category.kind,
        relativePath: withViewSuffix(name, ext, v.fileSuffix),
        view: v.name,
        ...extra,
      });
    }
  }
  return files;
}

/**
 * Compares the files expected for `frames` with what was seen (e.g. `saved` paths, made relative
 * the same way): names missing, names seen more than once and names nobody expected.
 */
export function compareOutputs(
  expected: Iterable<string>,
  seen: Iterable<string>,
): { missing: string[]; duplicated: string[]; unexpected: string[] } {
  const want = new Set(expected);
  const counts = new Map<string, number>();
  for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
  return {
    missing: [...want].filter((n) => !counts.has(n)).sort(),
    duplicated: [...counts]
      .filter(([, c]) => c > 1)
      .map(([n]) => n)
      .sort(),
    unexpected: [...counts.keys()].filter((n) => !want.has(n)).sort(),
  };
}
