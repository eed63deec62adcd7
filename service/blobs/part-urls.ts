// Signed URLs for blob parts: `PUT <public URL>/blobs/<workspace>/<sha256>-<size>/<part>?ps=..&exp=..&sig=..`.
// The HMAC covers the method, workspace, blob, part number, part size and expiry, so a URL can
// put only that part of that blob into that workspace, until it expires.
import type { BlobRef } from '../../shared/api/blob-upload.js';
import type { UrlSigner, VerifyResult } from '../adapters/fs-storage/url-signer.js';
import { blobName, parseBlobName } from './part-layout.js';

/** Path prefix of part URLs, outside the API prefix: the signature is the credential. */
export const BLOB_PARTS_PATH = '/blobs';

export interface PartAddress {
  workspaceId: string;
  blob: BlobRef;
  partNumber: number;
  partSize: number;
}

const WORKSPACE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function signedKey(a: Pick<PartAddress, 'workspaceId' | 'blob' | 'partNumber'>): string {
  return `blobs/${a.workspaceId}/${blobName(a.blob)}/${a.partNumber}`;
}

export class BlobPartUrls {
  constructor(
    private readonly signer: UrlSigner,
    /** Origin clients reach the service at (known once it listens). */
    private readonly publicUrl: () => string,
  ) {}

  url(a: PartAddress, expiresAt: Date): string {
    const q = this.signer.sign({
      method: 'PUT',
      key: signedKey(a),
      expiresAt: Math.floor(expiresAt.getTime() / 1000),
      params: { ps: String(a.partSize) },
    });
    return `${this.publicUrl()}${BLOB_PARTS_PATH}/${a.workspaceId}/${blobName(a.blob)}/${a.partNumber}?${q}`;
  }

  /**
   * The part a request's path and query address, if its signature holds: malformed parts read
   * as a bad signature (nothing we signed looks like that), an edited expiry as tampering.
   */
  verify(
    path: { ws: string; blob: string; part: string },
    query: Record<string, unknown>,
  ): { ok: true; address: PartAddress } | Extract<VerifyResult, { ok: false }> {
    // A repeated parameter parses as an array: only one plain value counts.
    const one = (k: string) => (typeof query[k] === 'string' ? query[k] : undefined);
    const blob = parseBlobName(path.blob);
    const partNumber = /^[1-9][0-9]{0,8}$/.test(path.part) ? Number(path.part) : NaN;
    const ps = one('ps') ?? '';
    const partSize = /^[1-9][0-9]{0,15}$/.test(ps) ? Number(ps) : NaN;
    if (!WORKSPACE.test(path.ws) || !blob || !Number.isSafeInteger(partNumber) || !Number.isSafeInteger(partSize)) {
      return { ok: false, reason: 'SIGNATURE_INVALID' };
    }
    const address = { workspaceId: path.ws, blob, partNumber, partSize };
    const r = this.signer.verify(
      { method: 'PUT', key: signedKey(address), expiresAt: Number(one('exp')), params: { ps } },
      one('sig'),
    );
    return r.ok ? { ok: true, address } : r;
  }
}
