// What a configured Blender build is, and the command that starts it. A farm's build is either
//   - an executable (`/usr/bin/blender`, or a wrapper script): started as is;
//   - a release folder (an unpacked official archive, `blender-5.2.2-linux-x64/` holding `blender`):
//     its own executable, which finds its bundled Python and libraries beside itself;
//   - a system root (a Debian root made by debootstrap holding `usr/bin/blender`): Blender runs
//     inside it through bubblewrap, the root read-only as `/`, with only the host folders a run
//     needs bound in at their own paths (so every path in the arguments means the same inside).
// run.ts is the only caller: every build gets the same arguments, limits and output handling.
import { accessSync, constants, existsSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

export type BuildKind = 'executable' | 'release' | 'root';

export class BuildPathError extends Error {
  constructor(
    message: string,
    /** `ENOENT` when nothing is at the path (a Blender that is not installed), as a failed spawn says. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'BuildPathError';
  }
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The kind of a build path. Throws BuildPathError when the path is neither an executable nor a
 * folder holding a Blender, with what was looked for.
 */
export function buildKind(path: string): BuildKind {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new BuildPathError(`${path} does not exist`, 'ENOENT');
  }
  if (!st.isDirectory()) {
    if (executable(path)) return 'executable';
    throw new BuildPathError(`${path} is not executable`);
  }
  if (executable(join(path, 'blender'))) return 'release';
  if (executable(join(path, 'usr/bin/blender')) && existsSync(join(path, 'etc/os-release'))) return 'root';
  throw new BuildPathError(
    `${path} is a folder without a Blender: expected an unpacked release (${path}/blender) or a system root ` +
      `(${path}/usr/bin/blender)`,
  );
}

/** Host folders a run needs, bound into a root at their own paths. */
export interface RunAccess {
  /** Folders Blender may write (the run's working folder, outputs). */
  write: readonly string[];
  /** Folders Blender may only read (scripts, the scene's folder). */
  read: readonly string[];
}

export interface Launch {
  command: string;
  args: string[];
  /** Environment changes for the launched command (over the caller's). */
  env: Record<string, string>;
}

/** A root's folders that make up its system (the rest, homes, mounts and temp folders, stay empty). */
const ROOT_SYSTEM_DIRS = new Set(['usr', 'etc', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']);

/** Host folders that hold data, not the system: what a root may be shown of the host for reading. */
const SYSTEM_DIRS = new Set([
  'bin',
  'boot',
  'dev',
  'etc',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'proc',
  'run',
  'sbin',
  'sys',
  'usr',
  'var',
  'lost+found',
]);

/**
 * The host's top-level data folders (`/home`, `/srv`, `/mnt`, `/tmp`, ...): for a run that reads files
 * anywhere (a dependency trace).
 */
export function hostDataDirs(): string[] {
  return readdirSync('/', { withFileTypes: true })
    .filter((d) => d.isDirectory() && !SYSTEM_DIRS.has(d.name))
    .map((d) => `/${d.name}`);
}

/** Folders a script needs: its package (`blender/`, whose contracts import each other) and the add-on beside it. */
export function scriptFolders(script: string): string[] {
  const pkg = dirname(dirname(resolve(script)));
  const addon = join(dirname(pkg), 'host-addon');
  return existsSync(addon) ? [pkg, addon] : [pkg];
}

/** GPU device nodes of the host, bound into a root so a GPU build inside it sees the devices. */
function gpuDeviceNodes(): string[] {
  const nodes: string[] = [];
  try {
    for (const n of readdirSync('/dev')) if (/^nvidia/.test(n) || n === 'kfd' || n === 'dri') nodes.push(`/dev/${n}`);
  } catch {
    // no /dev to read: no GPUs either
  }
  return nodes;
}

/** Finds an executable in PATH, like `which`; undefined when absent. */
export function findInPath(name: string, pathVar: string | undefined): string | undefined {
  if (isAbsolute(name)) return name;
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** bubblewrap's executable in PATH; undefined when it is not installed. */
function findBwrap(): string | undefined {
  return findInPath('bwrap', process.env.PATH);
}

/** Drops folders inside another listed one (bubblewrap would bind both; the outer one suffices). */
function outermost(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths.map((p) => resolve(p)))].sort();
  return sorted.filter((p, i) => !sorted.slice(0, i).some((q) => q === '/' || p.startsWith(`${q}/`)));
}

export interface LaunchOptions {
  /** The run's working folder (bound in when it lies in a bound folder). Default none. */
  cwd?: string;
  /** bubblewrap's executable. Default: found in PATH. */
  bwrap?: string;
  /**
   * Run in the sandbox, whatever the kind of build: no network (a namespace of its own), no host
   * folder but the system's (read-only) and `access`, a private /tmp and /run, HOME in the first
   * writable folder, no GPU device nodes but `devices`. Default false: only a root runs in bubblewrap,
   * with the host's network and GPUs.
   */
  sandbox?: boolean;
  /** Device nodes the sandboxed run may use (a GPU slot's, gpu-nodes.ts). Default none. */
  devices?: readonly string[];
}

/**
 * Files of the host's /etc a Blender run needs (the libraries' configuration, fonts, time zone, users); never the rest
 * (service configs, credentials).
 */
const HOST_ETC = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'fonts',
  'localtime',
  'timezone',
  'passwd',
  'group',
  'nsswitch.conf',
  'os-release',
  'debian_version',
  'glvnd',
  'vulkan',
  'OpenCL',
  'egl',
  'nvidia',
];

/** The host's own system, read-only: /usr and its merged links, and the parts of /etc in HOST_ETC. */
function hostSystemArgs(): string[] {
  const args: string[] = [];
  for (const d of readdirSync('/', { withFileTypes: true })) {
    if (!ROOT_SYSTEM_DIRS.has(d.name) || d.name === 'etc') continue;
    if (d.isSymbolicLink()) args.push('--symlink', readlinkSync(`/${d.name}`), `/${d.name}`);
    else if (d.isDirectory()) args.push('--ro-bind', `/${d.name}`, `/${d.name}`);
  }
  for (const e of HOST_ETC) if (existsSync(`/etc/${e}`)) args.push('--ro-bind', `/etc/${e}`, `/etc/${e}`);
  return args;
}

/** A root's system folders read-only: its /usr, /etc and merged links (bin, lib...). */
function rootSystemArgs(root: string): string[] {
  const args: string[] = [];
  for (const d of readdirSync(root, { withFileTypes: true })) {
    if (d.isSymbolicLink()) args.push('--symlink', readlinkSync(join(root, d.name)), `/${d.name}`);
    else if (d.isDirectory() && ROOT_SYSTEM_DIRS.has(d.name)) args.push('--ro-bind', join(root, d.name), `/${d.name}`);
  }
  return args;
}

const underSystem = (p: string) => [...ROOT_SYSTEM_DIRS].some((d) => resolve(p).startsWith(`/${d}/`));

/**
 * The command that runs `argv` with the build at `path`: the build itself, or bubblewrap around
 * it (a root always; any build with `sandbox`).
 */
export function launchBuild(
  path: string,
  argv: readonly string[],
  access: RunAccess,
  opts: LaunchOptions = {},
): Launch {
  const kind = buildKind(path);
  const direct = kind === 'release' ? join(path, 'blender') : path;
  if (kind !== 'root' && !opts.sandbox) return { command: direct, args: [...argv], env: {} };
  const bwrap = opts.bwrap ?? findBwrap();
  if (!bwrap) {
    throw new BuildPathError(
      kind === 'root'
        ? `${path} is a system root, which runs in bubblewrap: install it (apt-get install bubblewrap)`
        : 'Blender runs in a sandbox made by bubblewrap, which is not installed: install it (apt-get install ' +
            'bubblewrap), or start the worker with --no-sandbox',
    );
  }
  // On an empty `/` (bubblewrap's own tmpfs): the system read-only (the root's, or the host's), host
  // folders bound at their own paths (so every path in the arguments means the same inside).
  const args = kind === 'root' ? rootSystemArgs(resolve(path)) : hostSystemArgs();
  const own =
    kind === 'release' ? [resolve(path)] : kind === 'executable' && !underSystem(path) ? [dirname(resolve(path))] : [];
  // A private /tmp, and a private /run holding Blender's home and temp folder: /tmp itself may be
  // bound from the host read-only below (a trace reads files anywhere), and Blender must write somewhere.
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/run',
    '--dir',
    '/run/home',
    '--dir',
    '/run/tmp',
    '--die-with-parent',
  );
  // Cycles reads the CPU topology; GPU runtimes read the PCI devices.
  if (existsSync('/sys/devices/system/cpu'))
    args.push('--ro-bind', '/sys/devices/system/cpu', '/sys/devices/system/cpu');
  if (opts.sandbox) {
    args.push('--unshare-all');
    for (const node of opts.devices ?? []) if (existsSync(node)) args.push('--dev-bind', node, node);
    if ((opts.devices ?? []).length > 0 && existsSync('/sys')) args.push('--ro-bind', '/sys', '/sys');
  } else {
    for (const node of gpuDeviceNodes()) args.push('--dev-bind', node, node);
  }
  const write = outermost(access.write);
  if (kind === 'root') {
    const hidden = [...write, ...access.read].find(underSystem);
    if (hidden) {
      throw new BuildPathError(
        `${hidden} cannot be shown to the Blender in the system root ${path}: the root brings its own /usr and ` +
          '/etc. Keep renderbridge and its data folders elsewhere (a home or /srv), or use a release folder or ' +
          'an executable build.',
      );
    }
  }
  // A folder under the system's is there already (read-only); a read-only folder inside a writable
  // one is there too (writable); one around a writable one would hide it, so it is bound first.
  const read = outermost([...access.read, ...own]).filter(
    (r) => !(kind !== 'root' && underSystem(r)) && !write.some((w) => r === w || r.startsWith(`${w}/`)),
  );
  for (const p of read) if (existsSync(p)) args.push('--ro-bind', p, p);
  for (const p of write) if (existsSync(p)) args.push('--bind', p, p);
  const home =
    opts.sandbox && write.length > 0 && existsSync(write[0]!) ? join(write[0]!, '.blender-home') : '/run/home';
  if (home !== '/run/home') args.push('--dir', home);
  // The working folder where it is bound in; a run given no folders (a version probe) works in its private temp folder.
  const cwd = opts.cwd ? resolve(opts.cwd) : undefined;
  const bound = [...write, ...read].some((p) => cwd && (cwd === resolve(p) || cwd.startsWith(`${resolve(p)}/`)));
  args.push('--chdir', cwd && bound ? cwd : '/run/tmp');
  args.push(kind === 'root' ? '/usr/bin/blender' : resolve(direct), ...argv);
  // Blender's config and caches (compiled GPU kernels) in the job's folder when sandboxed: kept for
  // the job's next runs, never shared with another job; else in the private /run.
  return { command: bwrap, args, env: { HOME: home, TMPDIR: '/run/tmp' } };
}
