// unpackSource: a project zip (or a bare .blend) becomes the job's project folder. Well-formed
// sources unpack as they are; hostile archives are refused with a typed error and nothing written.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asTaskOutcome, FatalTaskError } from '../../service/worker/runtime/outcomes.js';
import { pickSceneFile } from '../../service/worker/project/project-files.js';
import { UnpackError } from '../../zip/errors.js';
import { unpackSource, type UnpackOptions } from '../../zip/unpack.js';
import { refusal, unpackScratch, writeZipIn } from './unpack-helpers.js';
import { buildZip, type RawEntry } from './zip-writer.js';

let base: string;
let jobDir: string;
beforeEach(() => void ({ base, jobDir } = unpackScratch()));
afterEach(() => rmSync(base, { recursive: true, force: true }));

const writeZip = (entries: RawEntry[], opts?: { entryCount?: number }) => writeZipIn(base, entries, opts);
const unzip = (source: string, extra: Partial<UnpackOptions> = {}) =>
  unpackSource({ source, fileType: 'zip', jobDir, ...extra });

/** Every path under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

/** After a refusal: the job folder is empty (no project, no temporary folder) and nothing appeared beside it. */
function expectNothingWritten(): void {
  expect(tree(jobDir)).toEqual([]);
  expect(tree(base).filter((p) => p !== 'upload.zip' && !p.startsWith('jobs'))).toEqual([]);
}

describe('unpackSource: well-formed sources', () => {
  it('unpacks a nested project made by Info-ZIP into the job folder', async () => {
    const src = join(base, 'src');
    mkdirSync(join(src, 'tex', 'wood'), { recursive: true });
    writeFileSync(join(src, 'shot.blend'), 'BLENDER-v304');
    writeFileSync(join(src, 'tex', 'wood', 'oak.png'), Buffer.alloc(3 * 1024 * 1024, 7)); // stored (-0)
    writeFileSync(join(src, 'notes.txt'), 'x'.repeat(10_000));
    execFileSync('zip', ['-q', '-r', '-0', join(base, 'upload.zip'), '.'], { cwd: src });
    const r = await unzip(join(base, 'upload.zip'));
    expect(r.root).toBe(join(jobDir, 'project'));
    expect(r.files).toEqual(['notes.txt', 'shot.blend', 'tex/wood/oak.png']);
    expect(readFileSync(join(r.root, 'shot.blend'), 'utf8')).toBe('BLENDER-v304');
    expect(statSync(join(r.root, 'tex', 'wood', 'oak.png')).size).toBe(3 * 1024 * 1024);
    expect(r.bytes).toBe(3 * 1024 * 1024 + 10_000 + 12);
    expect(r.manifest).toBeNull();
    expect(tree(jobDir).filter((p) => p.startsWith('.unpack-'))).toEqual([]);
    expect(pickSceneFile(r.files)).toBe('shot.blend');
  });

  it('replaces the project of an earlier attempt', async () => {
    mkdirSync(join(jobDir, 'project'));
    writeFileSync(join(jobDir, 'project', 'stale.txt'), 'old');
    const r = await unzip(writeZip([{ name: 'a.blend', data: 'new' }]));
    expect(tree(r.root)).toEqual(['a.blend']);
  });

  it('copies a bare .blend under its upload name', async () => {
    const file = join(base, 'upload.bin');
    writeFileSync(file, 'BLENDER');
    const r = await unpackSource({ source: file, fileType: 'blend', jobDir, fileName: 'My Shot.blend' });
    expect(r.files).toEqual(['My Shot.blend']);
    expect(readFileSync(join(r.root, 'My Shot.blend'), 'utf8')).toBe('BLENDER');
    const bad = await refusal(unpackSource({ source: file, fileType: 'blend', jobDir, fileName: '../x.txt' }));
    expect(bad.code).toBe('SOURCE_BAD_NAME');
  });

  it('skips __MACOSX entries and treats backslashes as folder separators', async () => {
    const r = await unzip(
      writeZip([
        { name: 'dir\\scene.blend', data: 'b' },
        { name: '__MACOSX/dir/._scene.blend', data: 'junk' },
      ]),
    );
    expect(r.files).toEqual(['dir/scene.blend']);
  });
});

describe('unpackSource: hostile archives are refused with a typed error and nothing written', () => {
  it.each([
    ['../evil', 'ZIP_PATH_TRAVERSAL'],
    ['ok/../../evil', 'ZIP_PATH_TRAVERSAL'],
    ['..\\evil', 'ZIP_PATH_TRAVERSAL'],
    ['/tmp/evil', 'ZIP_ABSOLUTE_PATH'],
    ['C:/evil', 'ZIP_ABSOLUTE_PATH'],
    ['C:\\evil', 'ZIP_ABSOLUTE_PATH'],
    ['\\\\server\\share\\evil', 'ZIP_ABSOLUTE_PATH'],
    ['bad\u0001name', 'ZIP_BAD_NAME'],
  ])('%s -> %s', async (name, code) => {
    const err = await refusal(
      unzip(
        writeZip([
          { name: 'fine.blend', data: 'ok' },
          { name, data: 'pwned' },
        ]),
      ),
    );
    expect(err.code).toBe(code);
    // The worker's outcome for the refusal (outcomes.ts): the job fails with the code as its name.
    const outcome = asTaskOutcome(err);
    expect((outcome as FatalTaskError).failedReason).toMatchObject({
      name: code,
      type: 'VALIDATION_FAILED',
      errorDetails: { code },
    });
    expect(outcome).toBeInstanceOf(FatalTaskError);
    expectNothingWritten();
  });

  it('refuses a symlink stored by zip -y', async () => {
    const src = join(base, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'a.blend'), 'b');
    symlinkSync('/etc/passwd', join(src, 'link'));
    execFileSync('zip', ['-q', '-y', '-r', join(base, 'upload.zip'), '.'], { cwd: src });
    rmSync(src, { recursive: true });
    const err = await refusal(unzip(join(base, 'upload.zip')));
    expect(err.code).toBe('ZIP_SYMLINK');
    expect(err.details).toMatchObject({ entry: 'link' });
    expectNothingWritten();
  });

  it('refuses fifo and device entries', async () => {
    expect((await refusal(unzip(writeZip([{ name: 'pipe', data: '', mode: 0o010644 }])))).code).toBe(
      'ZIP_SPECIAL_FILE',
    );
    expect((await refusal(unzip(writeZip([{ name: 'dev', data: '', mode: 0o020644 }])))).code).toBe('ZIP_SPECIAL_FILE');
    expectNothingWritten();
  });

  it('refuses more entries than the limit, from the header and before writing', async () => {
    const entries = Array.from({ length: 12 }, (_, i) => ({ name: `f${i}.txt`, data: 'x' }));
    const err = await refusal(unzip(writeZip(entries), { limits: { maxEntries: 10 } }));
    expect(err.code).toBe('ZIP_TOO_MANY_ENTRIES');
    expect(err.details).toMatchObject({ maxEntries: 10, entries: 12 });
    expectNothingWritten();
  });

  it('refuses, while streaming, an entry whose header understates its size', async () => {
    // Header: 1,000 bytes (passes every header check). Real data: 5 MiB of zeros.
    const data = Buffer.alloc(5 * 1024 * 1024);
    const err = await refusal(unzip(writeZip([{ name: 'liar.bin', data, declaredSize: 1000 }])));
    expect(err.code).toBe('ZIP_SIZE_MISMATCH');
    expectNothingWritten();
  });

  it('refuses an entry whose header overstates its size, and a wrong CRC', async () => {
    expect((await refusal(unzip(writeZip([{ name: 'short.bin', data: 'abc', declaredSize: 4 }])))).code).toBe(
      'ZIP_SIZE_MISMATCH',
    );
    expect((await refusal(unzip(writeZip([{ name: 'crc.bin', data: 'abc', declaredCrc: 1234 }])))).code).toBe(
      'ZIP_CORRUPT',
    );
    expectNothingWritten();
  });

  it('counts the real total against maxTotalBytes', async () => {
    const entries = [0, 1, 2].map((i) => ({ name: `part${i}.bin`, data: Buffer.alloc(400, i) }));
    const err = await refusal(unzip(writeZip(entries), { limits: { maxTotalBytes: 1000 } }));
    expect(err.code).toBe('ZIP_TOO_LARGE');
    expectNothingWritten();
  });

  it('refuses encrypted entries', async () => {
    const src = join(base, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'secret.blend'), 'BLENDER'.repeat(100));
    execFileSync('zip', ['-q', '-P', 'hunter2', join(base, 'upload.zip'), 'secret.blend'], { cwd: src });
    rmSync(src, { recursive: true });
    const err = await refusal(unzip(join(base, 'upload.zip')));
    expect(err.code).toBe('ZIP_ENCRYPTED');
    expectNothingWritten();
  });

  it('refuses names that collide after Unicode normalisation, and file/folder clashes', async () => {
    const nfc = 'caf\u00e9.png';
    const nfd = 'cafe\u0301.png';
    expect(
      (
        await refusal(
          unzip(
            writeZip([
              { name: nfc, data: '1' },
              { name: nfd, data: '2' },
            ]),
          ),
        )
      ).code,
    ).toBe('ZIP_DUPLICATE_NAME');
    expect(
      (
        await refusal(
          unzip(
            writeZip([
              { name: 'a', data: '1' },
              { name: 'a/b', data: '2' },
            ]),
          ),
        )
      ).code,
    ).toBe('ZIP_DUPLICATE_NAME');
    expect(
      (
        await refusal(
          unzip(
            writeZip([
              { name: 'x.txt', data: '1' },
              { name: 'x.txt', data: '2' },
            ]),
          ),
        )
      ).code,
    ).toBe('ZIP_DUPLICATE_NAME');
    expectNothingWritten();
  });

  it('refuses a file that is not a zip', async () => {
    const file = join(base, 'upload.zip');
    writeFileSync(file, 'this is not a zip archive at all');
    expect((await refusal(unzip(file))).code).toBe('ZIP_CORRUPT');
    const broken = buildZip([{ name: 'a.bin', data: Buffer.alloc(100_000, 3) }]);
    broken.fill(0xff, 40, 200); // damage the deflate stream
    writeFileSync(file, broken);
    expect((await refusal(unzip(file))).code).toMatch(/ZIP_CORRUPT|ZIP_SIZE_MISMATCH/);
    expectNothingWritten();
  });

  it('leaves I/O errors untyped, so the task is retried', async () => {
    const err = await unzip(join(base, 'missing.zip')).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(UnpackError);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it(
    'keeps highly compressible files: how well data compresses is no reason to refuse it (bombs stop at the ' +
      'quota)',
    async () => {
      const zeros = Buffer.alloc(20 * 1024 * 1024);
      const r = await unzip(
        writeZip([
          { name: 'a.blend', data: 'x' },
          { name: 'log.txt', data: Buffer.alloc(900_000, 0x41) },
          { name: 'cache/zeros.bin', data: zeros },
        ]),
      );
      expect(r.files).toEqual(['a.blend', 'cache/zeros.bin', 'log.txt']);
      expect(statSync(join(r.root, 'cache', 'zeros.bin')).size).toBe(zeros.length);
      expect(deflateRawSync(zeros).length).toBeLessThan(zeros.length / 1000);
    },
  );
});
