// What this machine needs to render: Blender builds with their Cycles devices, EEVEE through EGL,
// ffmpeg with H.264, NVIDIA GPUs, and free disk in the data folder.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildCandidates, probeBuilds, type BlenderBuild } from '../../blender/builds.js';
import { runBlender } from '../../blender/run.js';
import { checkSandbox } from '../../blender/sandbox-check.js';
import { detectGpuInventory, probeBuildCapabilities } from '../../blender/devices.js';
import { fail, ok, reason, skip, warn, type CheckResult } from './check.js';

const run = promisify(execFile);
const GiB = 1024 ** 3;

export function nodeCheck(): CheckResult {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 20 || (major === 20 && minor >= 19)
    ? ok('node', `Node ${process.versions.node}`)
    : fail('node', `Node ${process.versions.node}`, 'Install Node 20.19 or newer.');
}

/** Every Blender build the worker would offer, with its GPU backends and denoiser. */
export async function blenderChecks(
  blenderPaths: readonly string[],
): Promise<{ results: CheckResult[]; builds: BlenderBuild[] }> {
  const { builds, problems } = await probeBuilds(buildCandidates({ blenderPaths }));
  const results: CheckResult[] = problems.map((p) =>
    warn('blender', p, 'Fix or remove that path (--blender, RENDERBRIDGE_BLENDER_X_Y).'),
  );
  if (builds.length === 0) {
    results.push(
      fail(
        'blender',
        'no Blender build found',
        'Install Blender (Debian: apt install blender), or pass --blender PATH / set RENDERBRIDGE_BLENDER_X_Y.',
      ),
    );
    return { results, builds };
  }
  for (const b of builds) {
    try {
      const caps = await probeBuildCapabilities(b.binary);
      const gpu = caps.cyclesBackends.length > 0 ? caps.cyclesBackends.join(', ') : 'none';
      const kernels =
        caps.precompiledKernels.length > 0
          ? `precompiled kernels: ${caps.precompiledKernels.join(', ')}`
          : 'no precompiled GPU kernels';
      const kind =
        b.kind === 'root' ? ' (system root, run in bubblewrap)' : b.kind === 'release' ? ' (release folder)' : '';
      const detail =
        `${b.version.text} at ${b.binary}${kind}${b.isDefault ? ' (default)' : ''}; Cycles GPU ` +
        `backends: ${gpu} (${kernels}); denoiser: ${caps.hasOpenImageDenoise ? 'yes' : 'no'}`;
      results.push(
        caps.hasOpenImageDenoise
          ? ok('blender', detail)
          : warn(
              'blender',
              detail,
              'This build has no OpenImageDenoise: jobs asking for denoising render without it ' +
                '(DENOISER_UNAVAILABLE). Use an official Blender build to denoise.',
            ),
      );
    } catch (err) {
      results.push(
        fail(
          'blender',
          `${b.version.text} at ${b.binary} could not be asked for its devices: ${reason(err)}`,
          'Run that Blender by hand with -b to see why it fails.',
        ),
      );
    }
  }
  return { results, builds };
}

/** Whether Blender runs in the sandbox here, or that the operator turned it off. */
export async function sandboxCheck(build: BlenderBuild | undefined, on: boolean): Promise<CheckResult> {
  if (!on) {
    return warn(
      'sandbox',
      "OFF (--no-sandbox): Blender runs with this machine's network, files and environment",
      'Drop --no-sandbox unless every project on this farm is trusted.',
    );
  }
  if (!build) return { name: 'sandbox', status: 'skip', detail: 'no Blender to test it with' };
  const r = await checkSandbox(build.binary);
  return r.ok
    ? ok(
        'sandbox',
        'Blender runs in bubblewrap: no network, only its job folder writable, no farm secrets in its environment',
      )
    : fail(
        'sandbox',
        `does not work: ${r.reason}`,
        'Install bubblewrap (apt-get install bubblewrap) and allow user namespaces; a worker refuses to ' +
          'start without it (or runs unsandboxed with --no-sandbox).',
      );
}

/** Renders one tiny EEVEE frame: EEVEE needs OpenGL, which headless machines get through EGL. */
export async function eeveeCheck(build: BlenderBuild | undefined): Promise<CheckResult> {
  if (!build) return skip('eevee', 'no Blender build');
  const dir = await mkdtemp(path.join(tmpdir(), 'rb-doctor-'));
  try {
    const out = path.join(dir, 'eevee.png');
    const expr = [
      'import bpy',
      's = bpy.context.scene',
      "s.render.engine = 'BLENDER_EEVEE'",
      's.render.resolution_x = 8',
      's.render.resolution_y = 8',
      `s.render.filepath = ${JSON.stringify(out)}`,
      'bpy.ops.render.render(write_still=True)',
    ].join('; ');
    const r = await runBlender({ binary: build.binary, args: ['--python-expr', expr], timeoutMs: 120_000 });
    if (existsSync(out)) return ok('eevee', `EEVEE renders with ${build.version.text}`);
    const last = r.lastLines
      .filter((l) => /error|egl|gpu|opengl/i.test(l))
      .slice(-2)
      .join(' | ');
    return fail(
      'eevee',
      `EEVEE could not render${last ? `: ${last}` : ''}`,
      "Install EGL (Debian: apt install libegl1); on a GPU machine, the NVIDIA driver's EGL library. Cycles " +
        'jobs are not affected.',
    );
  } catch (err) {
    return fail('eevee', `EEVEE could not render: ${reason(err)}`, 'Install EGL (Debian: apt install libegl1).');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function ffmpegCheck(): Promise<CheckResult> {
  try {
    const version = ((await run('ffmpeg', ['-hide_banner', '-version'])).stdout.split('\n')[0] ?? '').replace(
      / Copyright.*/,
      '',
    );
    await run('ffprobe', ['-hide_banner', '-version']);
    const encoders = (await run('ffmpeg', ['-hide_banner', '-encoders'], { maxBuffer: 8 << 20 })).stdout;
    if (!/\blibx264\b/.test(encoders))
      return warn(
        'ffmpeg',
        `${version} without libx264`,
        "Install an ffmpeg with libx264 (Debian's has it): MP4 previews and videos need it.",
      );
    return ok('ffmpeg', `${version}, with libx264 and ffprobe`);
  } catch (err) {
    return fail(
      'ffmpeg',
      `ffmpeg or ffprobe missing or broken: ${reason(err)}`,
      'Install ffmpeg (Debian: apt install ffmpeg): videos and previews need it.',
    );
  }
}

export async function gpuCheck(builds: readonly BlenderBuild[]): Promise<CheckResult> {
  const inv = await detectGpuInventory();
  if (inv.gpus.length === 0)
    return ok('gpus', `no NVIDIA GPU (${inv.note ?? 'none listed'}): this machine renders on the CPU`);
  const list = inv.gpus.map((g) => `${g.index}: ${g.name}, ${g.memoryMiB} MiB`).join('; ');
  const caps = await Promise.all(builds.map((b) => probeBuildCapabilities(b.binary).catch(() => undefined)));
  const usable = caps.some((c) => c && (c.cyclesBackends.includes('CUDA') || c.cyclesBackends.includes('OPTIX')));
  if (!usable)
    return warn(
      'gpus',
      `${list}; no Blender build here has a CUDA or OptiX backend`,
      'Install an official Blender build (it carries CUDA/OptiX kernels): without one these GPUs stay idle.',
    );
  return ok('gpus', `${list}; one render slot per GPU, pinned by UUID`);
}

/** Free space where the work happens; less than `minFree` fails tasks, so less than 10x is a warning. */
export async function diskCheck(dir: string, minFree: number): Promise<CheckResult> {
  let at = dir;
  while (!existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  try {
    const s = await statfs(at);
    const free = s.bavail * s.bsize;
    const detail = `${(free / GiB).toFixed(1)} GiB free at ${at}`;
    if (free < minFree)
      return fail('disk', detail, `Free space: tasks fail below ${(minFree / GiB).toFixed(1)} GiB (--min-free-disk).`);
    if (free < 10 * minFree)
      return warn(
        'disk',
        detail,
        'Little room for projects and frames: free space or move --data-dir to a bigger disk.',
      );
    return ok('disk', detail);
  } catch (err) {
    return fail('disk', `cannot read free space of ${at}: ${reason(err)}`, 'Check that the data folder is readable.');
  }
}
