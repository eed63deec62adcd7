// A throwaway S3-compatible server for tests: s3rver on 127.0.0.1 and a free port, storing into
// a temp folder, with one fresh bucket. s3rver checks presigned URLs' expiry and access key but
// not their SigV4 signatures.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { S3Settings } from '../../service/config.js';

/** The part of s3rver's API used here (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverCtor = new (opts: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

/** s3rver's built-in account (its only one). */
const ACCESS_KEY_ID = 'S3RVER';
const SECRET_ACCESS_KEY = 'S3RVER';

export interface TestS3 {
  /** Settings pointing at the server and the new bucket (path-style, us-east-1, no prefix). */
  settings: S3Settings;
  /** The server's credentials as AWS environment variables, for a service started in a child process. */
  env: { AWS_ACCESS_KEY_ID: string; AWS_SECRET_ACCESS_KEY: string };
  /** The same credentials, for S3ObjectStorage.fromSettings(settings, { credentials }) in this process. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Stops the server and removes its folder (the bucket with it). */
  close(): Promise<void>;
}

export interface StartS3Options {
  /**
   * Run s3rver in a child Node with --openssl-legacy-provider instead of in this process. s3rver
   * encrypts ListObjectsV2 continuation tokens with DES, which Node 17+ (OpenSSL 3) refuses by
   * default: in-process, any listing longer than one page (1000 keys) fails with InternalError.
   * Default false.
   */
  childProcess?: boolean;
}

export async function startS3(opts: StartS3Options = {}): Promise<TestS3> {
  const directory = await mkdtemp(path.join(tmpdir(), 'rb-s3rver-'));
  const bucket = `rb-test-${randomBytes(6).toString('hex')}`;
  let server: { port: number; close(): Promise<void> };
  try {
    server = opts.childProcess ? await startChild(directory, bucket) : await startInProcess(directory, bucket);
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  return {
    settings: {
      endpoint: `http://127.0.0.1:${server.port}`,
      bucket,
      region: 'us-east-1',
      forcePathStyle: true,
      prefix: '',
    },
    env: { AWS_ACCESS_KEY_ID: ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY },
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

function s3rverOptions(directory: string, bucket: string) {
  return { address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] };
}

async function startInProcess(directory: string, bucket: string) {
  // s3rver is CommonJS without types; require keeps its default export out of the type checker.
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
  const server = new S3rver(s3rverOptions(directory, bucket));
  const address = await server.run();
  return { port: address.port, close: () => server.close() };
}

/** Runs in the child: starts s3rver, reports its port, and exits when the parent goes away. */
const CHILD_SCRIPT = `
const S3rver = require(process.argv[1]);
const server = new S3rver(JSON.parse(process.argv[2]));
server.run().then((a) => process.send({ port: a.port }), (e) => { console.error(e); process.exit(1); });
process.on('disconnect', () => process.exit(0));
`;

async function startChild(directory: string, bucket: string) {
  const modulePath = createRequire(import.meta.url).resolve('s3rver');
  const args = [
    '--openssl-legacy-provider',
    '-e',
    CHILD_SCRIPT,
    modulePath,
    JSON.stringify(s3rverOptions(directory, bucket)),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`s3rver child process exited (code ${code}) before listening`)));
    child.once('error', reject);
  });
  return {
    port,
    async close() {
      child.disconnect();
      await exited;
    },
  };
}
