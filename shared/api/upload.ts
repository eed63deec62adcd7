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
