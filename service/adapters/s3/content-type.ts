// Content-Type for downloads by file extension. Objects are stored without one (uploads arrive
// through presigned PUTs, outputs through put()), so presigned GETs ask S3 to answer with the
// type the filesystem storage's route would have sent, and previews display in a browser.
const TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  exr: 'image/x-exr',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  zip: 'application/zip',
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
};

export function contentTypeOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  const ext = dot < 0 ? '' : fileName.slice(dot + 1).toLowerCase();
  return TYPES[ext] ?? 'application/octet-stream';
}
