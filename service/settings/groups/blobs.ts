// Settings table entries: Unpacking limits, the worker's blob cache and content-addressed uploads.
// service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { BOTH, SERVICE, type Setting } from '../setting.js';

export const UNPACK_SETTINGS: readonly Setting[] = [
  {
    key: 'unpackQuotaBytes',
    flag: '--unpack-quota <size>',
    kind: { type: 'bytes', min: 1 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '64GiB',
    help: 'most bytes one uploaded .zip may expand to, per job; more fails the job with ZIP_TOO_LARGE',
  },
  {
    key: 'minFreeDiskBytes',
    flag: '--min-free-disk <size>',
    kind: { type: 'bytes', min: 0 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '1GiB',
    help: "space the work folder's disk keeps free after unpacking; less fails the task retryably",
  },
  {
    key: 'unpackMaxEntries',
    flag: '--unpack-max-entries <n>',
    kind: { type: 'int', min: 1 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '200000',
    help: 'most files and folders one project may hold',
  },
  {
    key: 'blobCacheDir',
    flag: '--blob-cache-dir <dir>',
    kind: { type: 'path' },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '<data-dir>/blob-cache',
    help:
      "where the worker keeps the blobs of content-addressed uploads; on the work folder's disk projects are " +
      'hard links into it',
  },
  {
    key: 'blobCacheMaxBytes',
    flag: '--blob-cache-size <size>',
    kind: { type: 'bytes', min: 0 },
    group: 'Unpacking and the blob cache',
    commands: BOTH,
    defaultText: '50GiB',
    help: 'most bytes the blob cache keeps; the least recently used blobs go first',
  },
];

export const UPLOAD_SETTINGS: readonly Setting[] = [
  {
    key: 'blobUploads',
    flag: '--no-blob-uploads',
    kind: { type: 'bool' },
    group: 'Content-addressed uploads',
    commands: SERVICE,
    defaultText: 'on',
    help: 'the content-addressed upload extension; off: its routes answer 404, GET /extensions lists none',
  },
  {
    key: 'blobPartSizeBytes',
    flag: '--blob-part-size <size>',
    kind: { type: 'bytes', min: 64 * 1024, max: 1024 ** 3 },
    group: 'Content-addressed uploads',
    commands: SERVICE,
    defaultText: '8MiB',
    help: 'raw bytes per part of an uploaded blob; a smaller blob is one PUT',
  },
  {
    key: 'blobRetentionDays',
    flag: '--blob-retention-days <days>',
    kind: { type: 'number', above: 0 },
    group: 'Content-addressed uploads',
    commands: SERVICE,
    defaultText: '30',
    help: 'days an unreferenced blob is kept after its last use; abandoned parts as long',
  },
];
