import { z } from 'zod';
import { DateTime, Url } from './common.js';

/** Accepted `fileType`s ("values other than zip: not shown"): a scene file or a zip project. */
export const FileType = z.enum(['blend', 'zip']);
export type FileType = z.infer<typeof FileType>;

/** Content-Types a PUT may carry for each file type. The first is the one clients should send. */
export const CONTENT_TYPES: Readonly<Record<FileType, readonly string[]>> = {
  zip: ['application/zip', 'application/x-zip-compressed'],
  blend: ['application/octet-stream', 'application/x-blender'],
};

export const CreateUploadBody = z
  .strictObject({
    fileName: z
      .string()
      .min(1)
      .max(255)
      .refine((n) => !/[/\\\0]/.test(n) && n !== '.' && n !== '..', 'a bare file name, without folders'),
    fileType: FileType,
  })
  .refine((b) => b.fileName.toLowerCase().endsWith(`.${b.fileType}`), {
    path: ['fileName'],
    message: 'the file name must end with the extension of fileType (.blend or .zip)',
  })
  .meta({ id: 'CreateUploadBody' });
export type CreateUploadBody = z.infer<typeof CreateUploadBody>;

export const UploadTarget = z
  .object({
    uploadUrl: Url,
    slug: z.string(),
    expiresAt: DateTime,
  })
  .meta({ id: 'UploadTarget' });
export type UploadTarget = z.infer<typeof UploadTarget>;

export const BundledAddon = z.object({
  bundledPathInPack: z.string().max(4096),
  name: z.string().max(1024),
  module: z.string().max(1024),
  addonType: z.string().max(64),
  selectedForBundle: z.boolean(),
});

export const UploadPreflight = z
  .object({
    schemaVersion: z.int().min(1),
    source: z.enum(['client_zip_inspection']),
    blendFiles: z.array(z.string().max(4096)).max(10_000),
    packerManifestPreview: z
      .object({
        manifestPath: z.string().max(4096),
        bundledAddons: z.array(BundledAddon).max(1000),
      })
      .nullable()
      .optional(),
  })
  .meta({ id: 'UploadPreflight' });
export type UploadPreflight = z.infer<typeof UploadPreflight>;

/** Path of GET /uploads/{slug} (extension resumable-uploads). */
export const UploadSlugParams = z.strictObject({ slug: z.string().min(1).max(200) });

/**
 * An upload target and how far its PUT got (extension resumable-uploads): a PUT whose connection
 * broke is continued with `Content-Range: bytes <receivedBytes>-<totalBytes - 1>/<totalBytes>`.
 */
export const UploadState = z
  .object({
    slug: z.string(),
    fileName: z.string(),
    fileType: FileType,
    expiresAt: DateTime,
    /** The whole file is stored: create the job. */
    completed: z.boolean(),
    /** Bytes the service holds: the file's size once completed, else those kept of a broken PUT (0: none). */
    receivedBytes: z.int().min(0),
    /**
     * The size the kept PUT announced (its Content-Length), or the file's once completed; null while nothing is kept.
     */
    totalBytes: z.int().min(0).nullable(),
  })
  .meta({ id: 'UploadState' });
export type UploadState = z.infer<typeof UploadState>;

export const UploadStateEnvelope = z.object({ data: UploadState }).meta({ id: 'UploadStateEnvelope' });
