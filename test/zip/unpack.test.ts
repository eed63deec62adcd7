import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asTaskOutcome, FatalTaskError } from '../../service/worker/runtime/outcomes.js';
import { PACK_MANIFEST_NAME } from '../../shared/pack/manifest.js';
import { pickSceneFile, resolveBundledAddons } from '../../service/worker/project/project-files.js';
import { UnpackError } from '../../zip/errors.js';
import { unpackSource, type UnpackOptions } from '../../zip/unpack.js';
import { buildZip, type RawEntry } from './zip-writer.js';

let base: string;
let jobDir: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'rb-unpack-'));
  jobDir = join(base, 'jobs', 'job-1');
  mkdirSync(jobDir, { recursive: true });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function writeZip(entries: RawEntry[], opts?: { entryCount?: number }): string {
  const file = join(base, 'upload.zip');
  writeFileSync(file, buildZip(entries, opts));
  return file;
}

function unzip(source: string, extra: Partial<UnpackOptions> = {}) {
  return unpackSource({ source, fileType: 'zip', jobDir, ...extra });
}

async function refusal(p: Promise<unknown>): Promise<UnpackError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnpackError);
  return err as UnpackError;
}

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

describe('pickSceneFile', () => {
  const files = ['shots/a.blend', 'shots/a.blend1', 'b.blend', '__MACOSX/shots/._a.blend', 'tex/x.png'];

  it('needs pathToFileForRender when there are several .blend files, and lists them', () => {
    expect(() => pickSceneFile(files)).toThrow(UnpackError);
    try {
      pickSceneFile(files);
    } catch (e) {
      expect((e as UnpackError).code).toBe('SCENE_FILE_AMBIGUOUS');
      expect((e as UnpackError).details).toEqual({ choices: ['b.blend', 'shots/a.blend'] });
    }
  });

  it('accepts a normalised pathToFileForRender that exists', () => {
    expect(pickSceneFile(files, { pathToFileForRender: './shots//a.blend' })).toBe('shots/a.blend');
    expect(pickSceneFile(files, { pathToFileForRender: 'shots\\a.blend' })).toBe('shots/a.blend');
  });

  it.each(['c.blend', 'shots/a.blend1', '../b.blend', '/b.blend', 'tex/x.png'])(
    'refuses pathToFileForRender %s',
    (p) => {
      expect(() => pickSceneFile(files, { pathToFileForRender: p })).toThrow(
        /choose one of: b\.blend, shots\/a\.blend/,
      );
    },
  );

  it('ignores .blend1 backups and macOS metadata; a single .blend needs no choice', () => {
    expect(pickSceneFile(['s.blend', 's.blend1', '__MACOSX/._s.blend', '._s.blend'])).toBe('s.blend');
  });

  it('fails when there is no .blend', () => {
    expect(() => pickSceneFile(['x.blend1', 'y.png'])).toThrow(expect.objectContaining({ code: 'SCENE_FILE_MISSING' }));
  });
});

describe('bundled add-ons from the packer manifest', () => {
  const manifest = {
    version: 1,
    sceneFile: 'shots/a.blend',
    addons: [
      { id: 'my_rig', name: 'My Rig', path: 'addons/my_rig' },
      { id: 'helper', name: 'Helper', path: 'addons/helper.py' },
    ],
  };

  async function unpackWithManifest(m: unknown) {
    return unzip(
      writeZip([
        { name: 'shots/a.blend', data: 'a' },
        { name: 'b.blend', data: 'b' },
        { name: 'addons/my_rig/__init__.py', data: 'bl_info = {}' },
        { name: 'addons/helper.py', data: 'bl_info = {}' },
        { name: PACK_MANIFEST_NAME, data: JSON.stringify(m) },
      ]),
    );
  }

  it('reads the manifest; its sceneFile settles several .blend files', async () => {
    const r = await unpackWithManifest(manifest);
    expect(r.manifest?.addons).toHaveLength(2);
    expect(pickSceneFile(r.files, undefined, r.manifest)).toBe('shots/a.blend');
    expect(pickSceneFile(r.files, { pathToFileForRender: 'b.blend' }, r.manifest)).toBe('b.blend');
  });

  it('resolves the add-ons to enable to paths inside the job folder', async () => {
    const r = await unpackWithManifest(manifest);
    const all = resolveBundledAddons(r.manifest, undefined, undefined, { root: r.root, files: r.files });
    expect(all.map((a) => a.path)).toEqual([join(r.root, 'addons/my_rig'), join(r.root, 'addons/helper.py')]);
    const some = resolveBundledAddons(r.manifest, [{ id: 'cycles', name: 'Cycles' }], ['./addons/helper.py'], {
      root: r.root,
      files: r.files,
    });
    expect(some).toEqual([
      { id: 'helper', name: 'Helper', relativePath: 'addons/helper.py', path: join(r.root, 'addons/helper.py') },
    ]);
    expect(resolveBundledAddons(r.manifest, [{ id: 'my_rig', name: '' }], [], { root: r.root })).toHaveLength(1);
  });

  it('refuses unknown add-on paths, listing the valid ones', async () => {
    const r = await unpackWithManifest(manifest);
    expect(() => resolveBundledAddons(r.manifest, undefined, ['addons/nope'], { root: r.root })).toThrow(
      expect.objectContaining({
        code: 'ADDON_PATH_UNKNOWN',
        details: { unknown: ['addons/nope'], choices: ['addons/my_rig', 'addons/helper.py'] },
      }),
    );
    expect(() => resolveBundledAddons(null, undefined, ['x'], { root: r.root })).toThrow(
      expect.objectContaining({ code: 'ADDON_PATH_UNKNOWN' }),
    );
  });

  it('refuses a manifest naming add-ons the archive lacks, and a malformed manifest', async () => {
    const r = await unpackWithManifest({ ...manifest, addons: [{ id: 'ghost', name: 'Ghost', path: 'addons/ghost' }] });
    expect(() => resolveBundledAddons(r.manifest, undefined, undefined, { root: r.root, files: r.files })).toThrow(
      expect.objectContaining({ code: 'ADDON_MISSING' }),
    );
    rmSync(join(jobDir, 'project'), { recursive: true });
    const bad = await refusal(unpackWithManifest({ ...manifest, sceneFile: '../../etc/passwd' }));
    expect(bad.code).toBe('ZIP_BAD_MANIFEST');
  });
});
