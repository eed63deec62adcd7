// The real service with a counting proxy (counting-proxy.ts) on the path of every upload byte.
// In front of the service, the service signs its URLs for the proxy's origin (publicUrl): the
// client's API calls, single PUTs on file storage and blob parts on any storage cross it. In front
// of s3rver (`front: 'storage'`), the service's S3 endpoint is the proxy: single PUTs to S3 cross
// it, API calls do not.
import type { ServiceConfig } from '../../service/config.js';
import { startCountingProxy, type CountingProxy } from './counting-proxy.js';
import { startS3 } from './s3.js';
import { startTestService, type TestService } from './service.js';

export type StorageKind = 'files' | 's3';

export interface ProxiedService {
  svc: TestService;
  proxy: CountingProxy;
  /** The API root to give clients: through the proxy. */
  baseUrl: string;
  /** Matches the request line of the spec's single PUT. */
  uploadPut: RegExp;
  /** Matches the request line of a blob part PUT (the part URLs always point at the service). */
  blobPut: RegExp;
  close(): Promise<void>;
}

type ServiceOptions = NonNullable<Parameters<typeof startTestService>[0]>;

const BLOB_PUT = /^PUT \/blobs\//;

/**
 * Starts the service on SQLite with the given storage and a fresh proxy in front of it, or in
 * front of s3rver with `front: 'storage'` (S3 only).
 */
export async function startProxiedService(
  storage: StorageKind,
  options: ServiceOptions = {},
  front: 'service' | 'storage' = 'service',
): Promise<ProxiedService> {
  const proxy = await startCountingProxy();
  let s3: Awaited<ReturnType<typeof startS3>> | undefined;
  if (storage === 's3') {
    // The S3 SDK inside the service reads s3rver's account from the usual variables.
    process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
    s3 = await startS3();
  }
  const close = async (svc: TestService): Promise<void> => {
    await svc.close();
    await proxy.close();
    await s3?.close();
  };
  if (s3 && front === 'storage') {
    proxy.target = { host: '127.0.0.1', port: Number(new URL(s3.settings.endpoint ?? '').port) };
    const settings: ServiceConfig['s3'] = { ...s3.settings, endpoint: proxy.origin };
    const svc = await startTestService({ ...options, s3: settings });
    // API calls go straight to the service: only the storage traffic crosses the proxy.
    return {
      svc,
      proxy,
      baseUrl: svc.baseUrl,
      uploadPut: new RegExp(`^PUT /${s3.settings.bucket}/`),
      blobPut: BLOB_PUT,
      close: () => close(svc),
    };
  }
  const svc = await startTestService({ ...options, publicUrl: proxy.origin, ...(s3 ? { s3: s3.settings } : {}) });
  proxy.target = { host: '127.0.0.1', port: Number(new URL(svc.origin).port) };
  return {
    svc,
    proxy,
    baseUrl: `${proxy.origin}${new URL(svc.baseUrl).pathname}`,
    uploadPut: s3 ? new RegExp(`^PUT /${s3.settings.bucket}/`) : /^PUT \/storage\//,
    blobPut: BLOB_PUT,
    close: () => close(svc),
  };
}
