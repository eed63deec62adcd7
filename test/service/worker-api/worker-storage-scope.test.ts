// The key rules of the worker API's storage routes (service/worker-api/storage-scope.ts): what a
// job opens to the worker holding it, and how everything else is refused.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../service/http/api-error.js';
import type { JobRecord } from '../../../service/ports/jobs.js';
import { accessOf, jobOfKey } from '../../../service/worker-api/storage-scope.js';

const W = 'ws-1';
const J = '11111111-1111-4111-8111-111111111111';
const P = '22222222-2222-4222-8222-222222222222';
const Q = '33333333-3333-4333-8333-333333333333';

function rec(id: string, over: Partial<JobRecord['internal']> = {}): JobRecord {
  return {
    job: { id, workspaceId: W, status: 'rendering' },
    internal: { sourceKey: `uploads/${W}/slug-a/scene.blend`, fileType: 'blend', ...over },
  } as unknown as JobRecord;
}

const noChain = async () => [];
const refusal = async (p: Promise<unknown>) => {
  const err = await p.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return (err as ApiError).errorName;
};

describe('worker storage scope', () => {
  it("opens the job's own prefixes for writing, as folders (never a longer sibling)", async () => {
    for (const key of [
      `outputs/${W}/${J}/frames/f_0001.png`,
      `logs/${W}/${J}/chunk-1/a1-5.log`,
      `staging/${J}/frames/r1`,
      `staging/${J}`,
      `staging/${J}/`,
    ]) {
      expect(await accessOf(rec(J), key, noChain), key).toBe('write');
    }
    // A longer name is another job's folder: answered as missing.
    expect(await refusal(accessOf(rec(J), `staging/${J}x/frames/r1`, noChain))).toBe('JOB_NOT_FOUND');
    expect(await refusal(accessOf(rec(J), `outputs/${W}`, noChain))).toBe('STORAGE_KEY_NOT_IN_JOB');
  });

  it("keeps a completed job's published outputs read only, logs and staging writable for the clean-up", async () => {
    const completed = rec(J);
    (completed.job as { status: string }).status = 'completed';
    expect(await accessOf(completed, `outputs/${W}/${J}/frames/f_0001.png`, noChain)).toBe('read');
    expect(await accessOf(completed, `outputs/${W}/${J}`, noChain)).toBe('read');
    expect(await accessOf(completed, `staging/${J}`, noChain)).toBe('write');
    expect(await accessOf(completed, `logs/${W}/${J}/finalize/a1-5.log`, noChain)).toBe('write');
  });

  it("opens its upload, or its workspace's blobs for a blob project, for reading only", async () => {
    expect(await accessOf(rec(J), `uploads/${W}/slug-a/scene.blend`, noChain)).toBe('read');
    expect(await refusal(accessOf(rec(J), `uploads/${W}/slug-b/scene.blend`, noChain))).toBe('STORAGE_KEY_NOT_IN_JOB');
    expect(await refusal(accessOf(rec(J), `blobs/${W}/ab/abcd-10`, noChain))).toBe('STORAGE_KEY_NOT_IN_JOB');
    const blobs = rec(J, { sourceFormat: 'blobs', sourceKey: `uploads/${W}/slug-a/project.json` });
    expect(await accessOf(blobs, `blobs/${W}/ab/abcd-10`, noChain)).toBe('read');
    expect(await refusal(accessOf(blobs, `blobs/${W}`, noChain))).toBe('STORAGE_KEY_NOT_IN_JOB');
    expect(await refusal(accessOf(blobs, `blobs/other-ws/ab/abcd-10`, noChain))).toBe('OBJECT_NOT_FOUND');
  });

  it('opens the outputs of its requeue chain for reading, and answers any other job as missing', async () => {
    const chain = async () => [rec(P)];
    expect(await accessOf(rec(J), `outputs/${W}/${P}/kept/frames/r1`, chain)).toBe('read');
    expect(await refusal(accessOf(rec(J), `logs/${W}/${P}/a1.log`, chain))).toBe('JOB_NOT_FOUND');
    expect(await refusal(accessOf(rec(J), `staging/${P}/frames/r1`, chain))).toBe('JOB_NOT_FOUND');
    expect(await refusal(accessOf(rec(J), `outputs/${W}/${Q}/frames/f.png`, chain))).toBe('JOB_NOT_FOUND');
    expect(await refusal(accessOf(rec(J), `outputs/other-ws/${J}/frames/f.png`, chain))).toBe('OBJECT_NOT_FOUND');
    expect(await refusal(accessOf(rec(J), 'secrets/url-signing.key', chain))).toBe('STORAGE_KEY_NOT_IN_JOB');
  });

  it('reads the job a key names from its layout', () => {
    expect(jobOfKey(`outputs/${W}/${J}/x`)).toBe(J);
    expect(jobOfKey(`logs/${W}/${J}/x`)).toBe(J);
    expect(jobOfKey(`staging/${J}/frames/r1`)).toBe(J);
    expect(jobOfKey(`uploads/${W}/slug/x`)).toBeUndefined();
    expect(jobOfKey(`blobs/${W}/ab/x`)).toBeUndefined();
  });
});
