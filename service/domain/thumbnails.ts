// Object keys of a job's frame thumbnails (extension frame-thumbnails): one per frame, beside the
// job's outputs (`<output prefix>/thumbnails/f<frame>.<jpg|png>`), so the retention sweeper deletes
// them with the outputs. The key carries the frame, so a listing of the folder is the index: no
// table to keep in step with the files, on any store and from any worker.

export type ThumbnailExt = 'jpg' | 'png';

/** The folder of a job's thumbnails under its output prefix (jobOutputPrefix). */
export function thumbnailFolder(outputPrefix: string): string {
  return `${outputPrefix}/thumbnails`;
}

export function thumbnailKey(outputPrefix: string, frame: number, ext: ThumbnailExt): string {
  return `${thumbnailFolder(outputPrefix)}/f${frame}.${ext}`;
}

const KEY = /\/thumbnails\/f(\d{1,7})\.(jpg|png)$/;

/** The frame and type of a thumbnail's key; undefined for any other key. */
export function parseThumbnailKey(key: string): { frame: number; ext: ThumbnailExt } | undefined {
  const m = KEY.exec(key);
  return m ? { frame: Number(m[1]), ext: m[2] as ThumbnailExt } : undefined;
}

/** Whether a key of the job's output prefix is one of its thumbnails (finalize keeps them). */
export function isThumbnailKey(outputPrefix: string, key: string): boolean {
  return key.startsWith(`${thumbnailFolder(outputPrefix)}/`);
}
