// The real service with a counting proxy (counting-proxy.ts) on the path of every upload byte:
// on file storage the proxy fronts the service and the service signs its URLs for the proxy's
// origin (publicUrl); on S3 it fronts s3rver and the service's S3 endpoint is the proxy. Either
// way a client talking to `baseUrl` sends its uploads through the proxy.
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
  /** Matches the request line of an upload PUT (the spec's single PUT, or a blob part). */
  uploadPut: RegExp;
  close(): Promise<void>;
}

type ServiceOptions = NonNullable<Parameters<typeof startTestService>[0]>;

/** Starts the service on SQLite with the given storage, its upload traffic through a fresh proxy. */
export async function startProxiedService(storage: StorageKind, options: ServiceOptions = {}): Promise<ProxiedService> {
  const proxy = await startCountingProxy();
  if (storage === 'files') {
    const svc = await startTestService({ ...options, publicUrl: proxy.origin });
    proxy.target = { host: '127.0.0.1', port: Number(new URL(svc.origin).port) };
    return {
      svc,
      proxy,
      baseUrl: `${proxy.origin}${new URL(svc.baseUrl).pathname}`,
      uploadPut: /^PUT \/storage\//,
      async close() {
        await svc.close();
        await proxy.close();
      },
    };
  }
  // The S3 SDK inside the service reads s3rver's account from the usual variables.
  process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
  const s3 = await startS3();
  proxy.target = { host: '127.0.0.1', port: Number(new URL(s3.settings.endpoint ?? '').port) };
  const settings: ServiceConfig['s3'] = { ...s3.settings, endpoint: proxy.origin };
  const svc = await startTestService({ ...options, s3: settings });
  return {
    svc,
    proxy,
    // API calls go straight to the service: on S3 only the storage traffic crosses the proxy.
    baseUrl: svc.baseUrl,
    uploadPut: new RegExp(`^PUT /${s3.settings.bucket}/`),
    async close() {
      await svc.close();
      await proxy.close();
      await s3.close();
    },
  };
}
