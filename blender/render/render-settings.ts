// What render_setup.py (beside this module) applies inside Blender before a chunk renders, built
// from the job's finalConfig, and what the script answers on its output lines. Pure.
import { isAbsolute, resolve } from 'node:path';
import type { FinalConfig } from '../../shared/api/analysis.js';
import { MOVIE_OUTPUT_FORMATS } from '../../shared/api/enums.js';
import type { RequestedConfig } from '../../shared/api/render-config.js';
import { safeSegment } from '../../shared/safe-segment.js';
import type { PathRemapSpec } from '../remap/path-remaps.js';

export type DeviceType = NonNullable<FinalConfig['computeDeviceType']>;

/**
 * What render_setup.py applies. A field that is absent or null keeps the .blend's own value.
 * Written as JSON to the file given with `--settings`.
 */
export interface RenderSettings {
  schemaVersion: 1;
  /** Scene that must be active (Blender selects it with `-S`; the script refuses another one). */
  scene?: string;
  /** Camera object made `scene.camera`; camera-bound timeline markers are unbound when it changes. */
  camera?: string;
  /** The only view layer left with `use = True`. Absent: the file's enabled layers all render. */
  viewLayer?: string;
  engine?: string;
  /** [x, y] pixels, before the percentage. */
  resolution?: [number, number];
  resolutionPercentage?: number;
  /** Cycles `samples` or EEVEE `taa_render_samples`. */
  samples?: number;
  /** Cycles denoising; `enabled: false` always works, `true` only with a denoiser the build has. */
  denoise?: { enabled: boolean; denoiser?: 'OPTIX' | 'OPENIMAGEDENOISE'; useGpu?: boolean };
  /**
   * Cycles device. GPU types enable every device of that type Blender sees (the worker hides the
   * others with *_VISIBLE_DEVICES). No such device: exit 3, or the CPU when `allowCpuFallback`.
   */
  device: { type: DeviceType; allowCpuFallback?: boolean };
  /** Camera output format and its settings; movie formats become PNG. */
  output?: {
    format?: string;
    colorMode?: string;
    colorDepth?: string;
    compression?: number;
    quality?: number;
    exrCodec?: string;
    tiffCodec?: string;
  };
  fps?: number;
  fpsBase?: number;
  persistentData?: boolean;
  tiling?: { enabled?: boolean; tileSize?: number };
  compositorDevice?: 'CPU' | 'GPU';
  /** `aces` picks an ACES view transform when the build has one, else warns; `default` keeps the file's. */
  colorManagement: 'default' | 'aces';
  /** Add-on module ids to enable, after putting `paths` (folders holding the add-ons) first on sys.path. */
  addons: { ids: string[]; paths: string[] };
  /** Absolute folder that receives every File Output node, each in `<folder>/` (see compositeFolders). */
  compositeDir: string;
  /** Folder (under compositeDir) per top-level File Output node name. */
  compositeFolders: Record<string, string>;
  /** The packer's path remaps, applied before anything else (remap/remap_paths.py); absent: none. */
  pathRemaps?: PathRemapSpec;
}

export interface RenderSettingsOptions {
  /** Absolute folder for compositor outputs (no `#`, which Blender would take as a frame number). */
  compositeDir: string;
  /** GPUs the chunk is pinned to; only used to validate that a GPU device has some. Default none. */
  gpuUuids?: readonly string[];
  /** Add-on ids to enable. Default: the ids of `final.addonsToUse`. */
  addonIds?: readonly string[];
  /** Folders put first on Blender's sys.path (where bundled add-ons were unpacked). Default none. */
  addonPaths?: readonly string[];
  /**
   * The job's request. When given, the view layer is isolated only if the request named one
   * (finalConfig always carries the detected active layer, and isolating it would drop the other
   * layers a compositor may combine). Default: isolate `final.activeViewLayer`.
   */
  requested?: RequestedConfig;
  /** Render on the CPU instead of failing when the GPU type is not visible. Default false. */
  allowCpuFallback?: boolean;
  /** The manifest's path remaps and the project root. Default none (an empty list counts as none). */
  pathRemaps?: PathRemapSpec;
}

/** `#` in a folder name would become frame digits in Blender's output paths. */
export function checkFolder(what: string, dir: string): string {
  if (!isAbsolute(dir)) throw new Error(`${what} must be absolute: ${dir}`);
  if (dir.includes('#')) throw new Error(`${what} must not contain '#': ${dir}`);
  return resolve(dir);
}

/**
 * Folder names under compositeDir for File Output nodes, in node order: safeSegment of the name,
 * made unique ignoring case with -2, -3 (node names are unique, their safe forms may not be).
 */
export function compositeFolders(nodeNames: readonly string[]): string[] {
  const taken = new Set<string>();
  return nodeNames.map((name) => {
    const want = safeSegment(name);
    let folder = want;
    for (let i = 2; taken.has(folder.toLowerCase()); i++) folder = `${want}-${i}`;
    taken.add(folder.toLowerCase());
    return folder;
  });
}

function isMovie(format: string | undefined): boolean {
  return format !== undefined && (MOVIE_OUTPUT_FORMATS as ReadonlySet<string>).has(format);
}

/** Settings for render_setup.py from the job's finalConfig. Throws on a bad compositeDir or GPU pinning. */
export function renderSettingsFrom(final: FinalConfig, opts: RenderSettingsOptions): RenderSettings {
  const compositeDir = checkFolder('compositeDir', opts.compositeDir);
  const type = final.computeDeviceType ?? 'CPU';
  if (type !== 'CPU' && opts.gpuUuids !== undefined && opts.gpuUuids.length === 0) {
    throw new Error(`a ${type} render needs at least one GPU`);
  }
  const nodes = final.compositeOutputNodes ?? [];
  const folders = compositeFolders(nodes.map((n) => n.name));
  const outSet = final.outputSettings ?? {};
  const viewLayer = opts.requested ? opts.requested.activeViewLayer : final.activeViewLayer;
  const res = final.resolution;
  const samples = final.sampleCount ?? final.samples;
  return {
    schemaVersion: 1,
    ...(final.sceneToRender !== undefined ? { scene: final.sceneToRender } : {}),
    ...(final.activeCamera !== undefined ? { camera: final.activeCamera } : {}),
    ...(viewLayer !== undefined ? { viewLayer } : {}),
    ...(final.renderEngine !== undefined ? { engine: final.renderEngine } : {}),
    ...(res && res.length >= 2 ? { resolution: [res[0]!, res[1]!] as [number, number] } : {}),
    ...(final.resolutionPercentage !== undefined ? { resolutionPercentage: final.resolutionPercentage } : {}),
    ...(samples !== undefined ? { samples } : {}),
    ...(final.denoisingEnabled !== undefined
      ? {
          denoise: {
            enabled: final.denoisingEnabled,
            ...(final.denoiserType ? { denoiser: final.denoiserType } : {}),
            ...(final.denoisingUseGpu !== undefined ? { useGpu: final.denoisingUseGpu } : {}),
          },
        }
      : {}),
    device: { type, ...(opts.allowCpuFallback ? { allowCpuFallback: true } : {}) },
    output: {
      // Guard only: resolveFinalConfig already turned movie formats into PNG.
      ...(final.outputFormat ? { format: isMovie(final.outputFormat) ? 'PNG' : final.outputFormat } : {}),
      ...(outSet.colorMode ? { colorMode: outSet.colorMode } : {}),
      ...(outSet.colorDepth ? { colorDepth: outSet.colorDepth } : {}),
      ...(outSet.compression !== undefined ? { compression: outSet.compression } : {}),
      ...(outSet.quality !== undefined ? { quality: outSet.quality } : {}),
      ...(outSet.exrCodec ? { exrCodec: outSet.exrCodec } : {}),
      ...(outSet.tiffCodec ? { tiffCodec: outSet.tiffCodec } : {}),
    },
    ...(final.fps !== undefined ? { fps: final.fps } : {}),
    ...(final.fpsBase !== undefined ? { fpsBase: final.fpsBase } : {}),
    ...(final.persistentDataEnabled !== undefined ? { persistentData: final.persistentDataEnabled } : {}),
    ...(final.useTiling !== undefined || final.tileSize !== undefined
      ? {
          tiling: {
            ...(final.useTiling !== undefined ? { enabled: final.useTiling } : {}),
            ...(final.tileSize !== undefined ? { tileSize: final.tileSize } : {}),
          },
        }
      : {}),
    ...(final.compositorDevice ? { compositorDevice: final.compositorDevice } : {}),
    colorManagement: final.colorManagementPreset ?? 'default',
    addons: {
      ids: [...(opts.addonIds ?? (final.addonsToUse ?? []).map((a) => a.id))],
      paths: (opts.addonPaths ?? []).map((p) => resolve(p)),
    },
    compositeDir,
    compositeFolders: Object.fromEntries(nodes.map((n, i) => [n.name, folders[i]!])),
    ...(opts.pathRemaps && opts.pathRemaps.remaps.length > 0
      ? { pathRemaps: { root: resolve(opts.pathRemaps.root), remaps: opts.pathRemaps.remaps } }
      : {}),
  };
}

/** What a render_setup.py line says: its summary, a warning, an error, or nothing. */
export type SetupLine =
  | { type: 'ok'; summary: Record<string, unknown> }
  | { type: 'warning'; message: string }
  | { type: 'error'; message: string };

/** Parses `RB_SETUP_OK {json}`, `RB_WARNING: text` and `RB_SETUP_ERROR: text` lines; undefined for others. */
export function parseSetupLine(line: string): SetupLine | undefined {
  if (line.startsWith('RB_SETUP_OK ')) {
    try {
      const summary: unknown = JSON.parse(line.slice('RB_SETUP_OK '.length));
      if (summary && typeof summary === 'object' && !Array.isArray(summary))
        return { type: 'ok', summary: summary as Record<string, unknown> };
    } catch {
      // not ours after all
    }
    return undefined;
  }
  if (line.startsWith('RB_WARNING: ')) return { type: 'warning', message: line.slice('RB_WARNING: '.length) };
  if (line.startsWith('RB_SETUP_ERROR: ')) return { type: 'error', message: line.slice('RB_SETUP_ERROR: '.length) };
  return undefined;
}
