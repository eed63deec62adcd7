// The content-addressed upload extension (shared/extensions.ts): a project is sent as blobs named
// by their sha256 and size. The client asks which blobs the workspace lacks (POST
// /uploads/blobs/query), PUTs only those, part by part, to the signed URLs it gets, then commits
// the project's file list (POST /uploads/commit) and receives an ordinary upload slug: POST /jobs
// and everything after it are the spec's flow. Blobs belong to one workspace; another workspace
// holding the same bytes is never visible.
import { z } from 'zod';
import { ArchivePath } from '../pack/manifest.js';
import { DateTime, Url } from './common.js';

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in 64 lowercase hex digits');

/** A blob's identity: the sha256 of its bytes and their count. */
export const BlobRef = z
  .object({ sha256: Sha256, size: z.int().min(0).max(Number.MAX_SAFE_INTEGER) })
  .meta({ id: 'BlobRef' });
export type BlobRef = z.infer<typeof BlobRef>;

/**
 * How the client will send a blob's parts: `gzip` parts carry `Content-Encoding: gzip` (worth it
 * for .blend files, not for already compressed images). The sha256, size and part offsets are
 * always those of the raw bytes.
 */
export const BlobCompression = z.enum(['none', 'gzip']);
export type BlobCompression = z.infer<typeof BlobCompression>;

/** Most blobs and entries in one request (the packer's manifest allows 200,000 entries). */
export const MAX_BLOBS_PER_REQUEST = 200_000;

/**
 * Most parts one query answer lists (each with a signed URL). A project needing more is answered
 * page by page: the answer's `continueFrom` says where the next query starts. 1,000 (8 GiB of
 * 8 MiB parts, sent before the next page is asked for): an answer of 7,680 parts was 2.4 MB and
 * held the service's event loop for about 40 ms, so a key within its request budget could keep a
 * core busy signing (bench:attack); 1,000 keeps one answer to a few milliseconds.
 */
export const MAX_PARTS_PER_QUERY_ANSWER = 1_000;

export const BlobQueryBody = z
  .strictObject({
    blobs: z
      .array(BlobRef.extend({ compression: BlobCompression.default('none') }).strict())
      .max(MAX_BLOBS_PER_REQUEST),
    /**
     * Continuing a query cut at the part cap: the parts of the first blob listed start at this part
     * (the previous answer's `continueFrom.partNumber`). Default 1.
     */
    firstPart: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .meta({ id: 'BlobQueryBody' });
export type BlobQueryBody = z.input<typeof BlobQueryBody>;

export const BlobPart = z
  .object({
    /** 1-based. */
    partNumber: z.int().min(1),
    /** Offset of the part in the raw blob. */
    offset: z.int().min(0),
    /** Raw bytes of the part: every part but the last is `partSize` long. */
    length: z.int().min(0),
    /** Signed, expiring URL taking one PUT of the part's bytes (no Authorization header). */
    uploadUrl: Url,
    /** True when the service already holds this part (an upload resumed): skip it. */
    uploaded: z.boolean(),
  })
  .meta({ id: 'BlobPart' });
export type BlobPart = z.infer<typeof BlobPart>;

export const MissingBlob = BlobRef.extend({ parts: z.array(BlobPart) }).meta({ id: 'MissingBlob' });
export type MissingBlob = z.infer<typeof MissingBlob>;

export const BlobQueryResult = z
  .object({
    /** Raw bytes per part for the blobs listed in `missing`. */
    partSize: z.int().min(1),
    /** When the part URLs stop working: query again for new ones (parts already sent are kept). */
    expiresAt: DateTime,
    /** Blobs of the query the workspace already holds (nothing to send). */
    held: z.object({ count: z.int().min(0), bytes: z.int().min(0) }),
    /**
     * Blobs to send, in the order asked. Empty blobs (size 0) are never missing. At most
     * MAX_PARTS_PER_QUERY_ANSWER parts in all: past them the answer stops (the last blob may list
     * only its first parts) and `continueFrom` says where to go on.
     */
    missing: z.array(MissingBlob),
    /** Every blob of the query the workspace lacks, also those past the part cap, and their raw bytes. */
    missingTotal: z.object({ count: z.int().min(0), bytes: z.int().min(0) }).optional(),
    /**
     * Null when `missing` lists every part to send. Else the answer stopped at the part cap: send
     * what it lists, then query again with the blobs from `index` on (an index into this query's
     * `blobs`) and `firstPart: partNumber`, until an answer says null.
     */
    continueFrom: z
      .object({ index: z.int().min(0), partNumber: z.int().min(1) })
      .nullable()
      .optional(),
  })
  .meta({ id: 'BlobQueryResult' });
export type BlobQueryResult = z.infer<typeof BlobQueryResult>;

/** Answer to a part PUT. */
export const BlobPartResult = z
  .object({
    sha256: Sha256,
    size: z.int().min(0),
    partNumber: z.int().min(1),
    /** True once every part is in and the whole blob matched its sha256: the workspace holds it. */
    blobComplete: z.boolean(),
  })
  .meta({ id: 'BlobPartResult' });
export type BlobPartResult = z.infer<typeof BlobPartResult>;

export const ProjectEntry = BlobRef.extend({ path: ArchivePath }).meta({ id: 'ProjectEntry' });
export type ProjectEntry = z.infer<typeof ProjectEntry>;

export const CommitUploadBody = z
  .strictObject({
    /** The project's name as an upload `fileName` (ends in .zip: the project is a zip's content). */
    fileName: z
      .string()
      .min(1)
      .max(255)
      .refine((n) => !/[/\\\0]/.test(n) && n.toLowerCase().endsWith('.zip'), 'a bare file name ending in .zip'),
    /** Every file of the project: where it goes and which blob holds its bytes. */
    entries: z.array(ProjectEntry.strict()).min(1).max(MAX_BLOBS_PER_REQUEST),
  })
  .meta({ id: 'CommitUploadBody' });
export type CommitUploadBody = z.input<typeof CommitUploadBody>;

export const CommittedUpload = z
  .object({
    /** An ordinary, completed upload: create the job with POST /jobs { slug }. */
    slug: z.string(),
    fileName: z.string(),
    /** Sum of the entries' sizes. */
    size: z.int().min(0),
    fileCount: z.int().min(0),
    /** Until when the slug can create a job. */
    expiresAt: DateTime,
  })
  .meta({ id: 'CommittedUpload' });
export type CommittedUpload = z.infer<typeof CommittedUpload>;
