// Pure helpers that turn a `GET /jobs/{id}/downloads` answer into flat lists a downloader can use,
// whichever of the spec's forms (structured or legacy, URL or list or null) the service sent.
import type { DownloadOutput, Downloads, VideoEntry, ZipLinks } from '../api/downloads.js';

/** One file to download, with the same fields whatever form it came in. */
export interface OutputFile {
  readonly url: string;
  /** Display and save name: the service's when given, else the URL's last path segment. */
  readonly fileName: string;
  /** Path for recreating folders (compositor outputs); null when the service gave none. */
  readonly relativePath: string | null;
  /** Stereo or multiview suffix, when known. */
  readonly view: string | null;
  readonly outputType: 'frame' | 'composite';
  readonly compositeNodeName: string | null;
  /** True when built from a legacy URL list or marked legacy by the service: names may be lossy. */
  readonly legacy: boolean;
}

export type ZipState = 'ready' | 'pending' | 'unavailable';

export interface ZipLinksInfo {
  /** ready: URLs to fetch; pending: expected but not built yet (poll again); unavailable: none will come. */
  readonly state: ZipState;
  readonly urls: readonly string[];
}

/** A video of `transforms.video`, with the map key it was listed under. */
export interface VideoLink extends VideoEntry {
  /** Key of `transforms.video` (e.g. `mp4`); usually equal to `format`. */
  readonly key: string;
}

/**
 * Every frame and compositor output. The structured `frameOutputs` / `compositeNodeOutputs`
 * are preferred; when one is absent, the matching legacy URL list (`frames` / `compositeNodes`)
 * is used instead, each entry marked `legacy: true`.
 */
export function collectOutputs(
  downloads: Pick<Downloads, 'frames' | 'compositeNodes' | 'frameOutputs' | 'compositeNodeOutputs'>,
): OutputFile[] {
  const frames = downloads.frameOutputs
    ? downloads.frameOutputs.map(fromEntry)
    : downloads.frames.map((url) => fromLegacyUrl(url, 'frame'));
  const composites = downloads.compositeNodeOutputs
    ? downloads.compositeNodeOutputs.map(fromEntry)
    : downloads.compositeNodes.map((url) => fromLegacyUrl(url, 'composite'));
  return [...frames, ...composites];
}

/**
 * State and URLs of `transforms.framesZip` / `compositeNodesZip`: a URL string or a non-empty
 * list is ready, an empty list is expected but not ready, null (or absent) is not available.
 */
export function zipLinks(value: ZipLinks | undefined): ZipLinksInfo {
  if (value == null) return { state: 'unavailable', urls: [] };
  if (typeof value === 'string') return { state: 'ready', urls: [value] };
  return value.length > 0 ? { state: 'ready', urls: [...value] } : { state: 'pending', urls: [] };
}

/** `transforms.framesZipOutputs` / `compositeNodesZipOutputs` (entry, list or null) as a list. */
export function zipOutputs(value: DownloadOutput | readonly DownloadOutput[] | null | undefined): OutputFile[] {
  if (value == null) return [];
  return (Array.isArray(value) ? value : [value as DownloadOutput]).map(fromEntry);
}

/** Every entry of `transforms.video`, flattened; check `available` and `url` before fetching. */
export function videoLinks(video: Readonly<Record<string, readonly VideoEntry[]>> | null | undefined): VideoLink[] {
  if (video == null) return [];
  return Object.entries(video).flatMap(([key, entries]) => entries.map((entry) => ({ ...entry, key })));
}

/** A file name for a legacy URL: its last path segment, decoded, without any folder part. */
export function fileNameFromUrl(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split(/[?#]/)[0] ?? '';
  }
  const segment =
    path
      .split('/')
      .filter((s) => s !== '')
      .pop() ?? '';
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    decoded = segment;
  }
  // An encoded slash must not turn into a folder (or a way out of one) when the name is saved.
  const name = decoded.split(/[\\/]/).pop() ?? '';
  return name === '' || name === '.' || name === '..' ? 'output' : name;
}

function fromEntry(entry: DownloadOutput): OutputFile {
  return {
    url: entry.url,
    fileName: entry.fileName,
    relativePath: entry.relativePath ?? null,
    view: entry.view,
    outputType: entry.outputType,
    compositeNodeName: entry.compositeNodeName ?? null,
    legacy: entry.legacy,
  };
}

function fromLegacyUrl(url: string, outputType: OutputFile['outputType']): OutputFile {
  return {
    url,
    fileName: fileNameFromUrl(url),
    relativePath: null,
    view: null,
    outputType,
    compositeNodeName: null,
    legacy: true,
  };
}
