// Whether a file's pages have reached the disk: cachestat(2) (Linux 6.5) counts the pages of a
// file that are dirty or under writeback. A power cut cannot be run on the test machines; what it
// would take can be seen this way (test/e2e/frames-durable.test.ts, copied-frames-durable.test.ts).
import { execFile } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import { promisify } from 'node:util';

/** Pages of each file not on the disk yet, by cachestat(2) (syscall 451 on x86-64 and arm64 alike). */
const CACHESTAT = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class R(ctypes.Structure): _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]
class S(ctypes.Structure): _fields_ = [(n, ctypes.c_uint64) for n in ("c", "d", "w", "e", "re")]
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); r = R(0, 0); s = S()
    if libc.syscall(451, fd, ctypes.byref(r), ctypes.byref(s), 0) != 0:
        sys.exit("cachestat: " + os.strerror(ctypes.get_errno()))
    os.close(fd); print(s.d + s.w)
`;

export async function unwrittenPages(files: readonly string[]): Promise<number[]> {
  const { stdout } = await promisify(execFile)('python3', ['-c', CACHESTAT, ...files]);
  return stdout.trim().split('\n').map(Number);
}

/**
 * Why the check cannot run in `dir`, or undefined: it needs cachestat(2) and a disk (tmpfs pages
 * are never written back). `probe`: any existing file, to try the call on.
 */
export async function cannotCheckPages(dir: string, probe: string): Promise<string | undefined> {
  const TMPFS_MAGIC = 0x01021994;
  if ((await statfs(dir)).type === TMPFS_MAGIC) return `${dir} is on tmpfs, whose pages are never written back`;
  return unwrittenPages([probe]).then(
    () => undefined,
    (err: unknown) => `cachestat(2) is not available: ${String((err as Error).message).trim()}`,
  );
}
