// The pure downloads helpers, over every form the spec allows.
import { describe, expect, it } from 'vitest';
import type { DownloadOutput, Downloads, VideoEntry } from '../../../shared/api/downloads.js';
import { Downloads as DownloadsSchema } from '../../../shared/api/downloads.js';
import { collectOutputs, fileNameFromUrl, videoLinks, zipLinks, zipOutputs } from '../../../shared/client/downloads.js';

const S = 'https://dl.example/files';

const frameEntry: DownloadOutput = {
  url: `${S}/f1?sig=1`,
  fileName: 'frame_0001.png',
  view: 'L',
  outputType: 'frame',
  legacy: false,
};
const compositeEntry: DownloadOutput = {
  url: `${S}/c1?sig=1`,
  fileName: 'depth_0001.exr',
  relativePath: 'Depth/depth_0001.exr',
  view: null,
  outputType: 'composite',
  compositeNodeName: 'File Output',
  legacy: false,
};
const video: VideoEntry = {
  format: 'mp4',
  label: null,
  expected: true,
  available: true,
  url: `${S}/v.mp4`,
  fps: 24,
  segment: null,
};

function downloads(extra: Partial<Downloads> = {}): Downloads {
  // Built through the schema so the fixtures are answers the service could really send.
  return DownloadsSchema.parse({
    frames: [`${S}/legacy/frame%200001.png?sig=a`, `${S}/legacy/frame%200002.png`],
    compositeNodes: [`${S}/legacy/Depth%2Fdepth_0001.exr`],
    transforms: { framesZip: null, compositeNodesZip: null, video: {} },
    ...extra,
  });
}

describe('collectOutputs', () => {
  it('prefers the structured outputs', () => {
    const out = collectOutputs(downloads({ frameOutputs: [frameEntry], compositeNodeOutputs: [compositeEntry] }));
    expect(out).toEqual([
      {
        url: frameEntry.url,
        fileName: 'frame_0001.png',
        relativePath: null,
        view: 'L',
        outputType: 'frame',
        compositeNodeName: null,
        legacy: false,
      },
      {
        url: compositeEntry.url,
        fileName: 'depth_0001.exr',
        relativePath: 'Depth/depth_0001.exr',
        view: null,
        outputType: 'composite',
        compositeNodeName: 'File Output',
        legacy: false,
      },
    ]);
  });

  it('falls back to the legacy URL lists, naming files from the decoded last path segment', () => {
    const out = collectOutputs(downloads());
    expect(out.map((o) => [o.fileName, o.outputType, o.legacy, o.relativePath, o.view])).toEqual([
      ['frame 0001.png', 'frame', true, null, null],
      ['frame 0002.png', 'frame', true, null, null],
      // An encoded slash does not become a folder.
      ['depth_0001.exr', 'composite', true, null, null],
    ]);
    expect(out[0]?.url).toBe(`${S}/legacy/frame%200001.png?sig=a`);
  });

  it('falls back per kind: structured frames with legacy composites', () => {
    const out = collectOutputs(downloads({ frameOutputs: [frameEntry] }));
    expect(out.map((o) => [o.outputType, o.legacy])).toEqual([
      ['frame', false],
      ['composite', true],
    ]);
  });

  it('keeps an empty structured list rather than falling back', () => {
    expect(collectOutputs(downloads({ frameOutputs: [], compositeNodeOutputs: [] }))).toEqual([]);
  });
});

describe('zipLinks', () => {
  it('reads every form of framesZip / compositeNodesZip', () => {
    expect(zipLinks(`${S}/frames.zip`)).toEqual({ state: 'ready', urls: [`${S}/frames.zip`] });
    expect(zipLinks([`${S}/a.zip`, `${S}/b.zip`])).toEqual({ state: 'ready', urls: [`${S}/a.zip`, `${S}/b.zip`] });
    expect(zipLinks([])).toEqual({ state: 'pending', urls: [] });
    expect(zipLinks(null)).toEqual({ state: 'unavailable', urls: [] });
    expect(zipLinks(undefined)).toEqual({ state: 'unavailable', urls: [] });
  });

  it('reads the fields of a parsed answer', () => {
    const d = downloads({ transforms: { framesZip: [], compositeNodesZip: `${S}/c.zip`, video: {} } });
    expect(zipLinks(d.transforms.framesZip).state).toBe('pending');
    expect(zipLinks(d.transforms.compositeNodesZip).state).toBe('ready');
  });
});

describe('zipOutputs', () => {
  it('turns an entry, a list or null into a list', () => {
    expect(zipOutputs(frameEntry).map((o) => o.fileName)).toEqual(['frame_0001.png']);
    expect(zipOutputs([frameEntry, compositeEntry]).map((o) => o.outputType)).toEqual(['frame', 'composite']);
    expect(zipOutputs(null)).toEqual([]);
    expect(zipOutputs(undefined)).toEqual([]);
  });
});

describe('videoLinks', () => {
  it('flattens every format with its key', () => {
    const pending: VideoEntry = {
      ...video,
      label: 'part 2',
      available: false,
      url: null,
      segment: { start: 101, end: 200 },
    };
    const links = videoLinks({ mp4: [video, pending], webm: [{ ...video, format: 'webm' }] });
    expect(links.map((l) => [l.key, l.format, l.label, l.available])).toEqual([
      ['mp4', 'mp4', null, true],
      ['mp4', 'mp4', 'part 2', false],
      ['webm', 'webm', null, true],
    ]);
    expect(links[1]?.segment).toEqual({ start: 101, end: 200 });
    expect(videoLinks({})).toEqual([]);
    expect(videoLinks(undefined)).toEqual([]);
  });
});

describe('fileNameFromUrl', () => {
  it('never yields a path or an empty name', () => {
    expect(fileNameFromUrl(`${S}/a/b/render%20final.png?x=1#y`)).toBe('render final.png');
    expect(fileNameFromUrl(`${S}/a/..%2F..%2Fetc%2Fpasswd`)).toBe('passwd');
    // The URL parser resolves a bare %2e%2e segment itself; an encoded "../" is left to us.
    expect(fileNameFromUrl(`${S}/a/%2E%2E%2F`)).toBe('output');
    expect(fileNameFromUrl(`${S}/dir/`)).toBe('dir');
    expect(fileNameFromUrl('https://dl.example/')).toBe('output');
    expect(fileNameFromUrl(`${S}/bad%E0%A4%A`)).toBe('bad%E0%A4%A');
  });
});
