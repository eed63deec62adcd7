// What the unpack tests share: a scratch folder per test with an empty job folder in it, a zip
// written there from raw entries, and the typed refusal an unpack ended with.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { UnpackError } from '../../zip/errors.js';
import { buildZip, type RawEntry } from './zip-writer.js';

/** A fresh `base` folder holding an empty job folder `jobDir` (base/jobs/job-1). */
export function unpackScratch(): { base: string; jobDir: string } {
  const base = mkdtempSync(join(tmpdir(), 'rb-unpack-'));
  const jobDir = join(base, 'jobs', 'job-1');
  mkdirSync(jobDir, { recursive: true });
  return { base, jobDir };
}

/** Writes `entries` as base/upload.zip; returns its path. */
export function writeZipIn(base: string, entries: RawEntry[], opts?: { entryCount?: number }): string {
  const file = join(base, 'upload.zip');
  writeFileSync(file, buildZip(entries, opts));
  return file;
}

/** The UnpackError `p` rejected with; the test fails on anything else. */
export async function refusal(p: Promise<unknown>): Promise<UnpackError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnpackError);
  return err as UnpackError;
}
