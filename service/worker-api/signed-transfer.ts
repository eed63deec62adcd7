// The bytes of a remote worker's storage call: one PUT to a URL the service signed, and the few
// tries a transfer gets when S3 answers 5xx (as the SDK's own retries do in direct mode).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { ObjectExistsError } from '../ports/storage.js';
import { WorkerApiError } from './client.js';
import type { SignedUrl } from './storage-contract.js';

/** Tries of one transfer, and the first pause between them (doubling). */
const TRIES = 3;
const FIRST_PAUSE_MS = 200;

/**
 * Runs `attempt` until `again` says no about its answer, TRIES times at most. Where `retryErrors`
 * says yes (the attempt is safe to repeat, nothing was aborted), a thrown error is tried again
 * too, unless it is the service's refusal.
 */
export async function transient<T>(
  attempt: () => Promise<T>,
  again: (answer: T) => boolean,
  retryErrors: () => boolean = () => false,
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      const answer = await attempt();
      if (i >= TRIES || !again(answer)) return answer;
    } catch (err) {
      if (i >= TRIES || !retryErrors() || err instanceof WorkerApiError || err instanceof ObjectExistsError) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, FIRST_PAUSE_MS * 2 ** (i - 1)));
  }
}

/** One PUT of `size` bytes to a signed URL; resolves with the answer's status and ETag. */
export function upload(
  signed: SignedUrl,
  body: Readable,
  size: number,
  signal?: AbortSignal,
): Promise<{ status: number; etag: string | undefined }> {
  const url = new URL(signed.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      { method: 'PUT', headers: { ...signed.headers, 'content-length': String(size) }, ...(signal ? { signal } : {}) },
      (res) => {
        const etag = res.headers.etag;
        res
          .resume()
          .once('end', () => resolve({ status: res.statusCode ?? 0, etag }))
          .once('error', reject);
      },
    );
    req.once('error', reject);
    body.once('error', (err) => req.destroy(err));
    body.pipe(req);
  });
}
