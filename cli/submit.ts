// `renderbridge submit PATH`: pack (tracing a .blend's files with headless Blender), upload,
// create, validate, render, wait and download, in this process (no daemon needed), with progress
// bars on a terminal and one JSON document with --json. The active profile's outputFormat, video
// and overrides are the defaults of what no flag sets (flag > env > profile > the file's).
import { schedulingFrom, withSchedulingOptions, type SchedulingOptions } from './submit-scheduling.js';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { PackResult, Submission, SubmissionStep, SubmitSettings } from '../shared/daemon/submission-schemas.js';
import { HASH_CACHE_FILE, HashCache } from '../daemon/pack/hash-cache.js';
import { createPacker } from '../daemon/pack/packer.js';
import { submitDefaultsOf, withSubmitDefaults } from '../daemon/submit/defaults.js';
import { runSubmission } from '../daemon/submit/run.js';
import { renderConfigFrom } from '../daemon/submit/steps.js';
import { createTracer } from '../daemon/trace.js';
import { createDisplay, formatBytes, type Display } from './display.js';
import { CliError } from './errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { cliConfig, clientProvider, withConnectionOptions, type ConnectionOptions } from './connection.js';
import { collect } from './options.js';
import { createOutput } from './output.js';
import { overrideSettings, withRenderOverrides, type RenderOverrides } from './submit-overrides.js';
import { estimateThenRender } from './submit-estimate.js';
import { VERSION } from './version.js';

interface SubmitOptions extends ConnectionOptions, RenderOverrides, SchedulingOptions {
  frames: string[];
  camera?: string;
  viewLayer?: string;
  format?: string;
  video?: boolean;
  out?: string;
  wait: boolean;
  download: boolean;
  blender?: string;
  estimate?: boolean;
  yes?: boolean;
}

export function registerSubmitCommand(program: Command): void {
  withRenderOverrides(
    withConnectionOptions(
      withSchedulingOptions(
        program
          .command('submit')
          .description('Pack a .blend, a project folder or a .zip, render it on the farm and download the frames')
          .argument('<path>', 'a .blend (its files are found by running Blender headless), a project folder, or a .zip')
          .option(
            '--frames <ranges>',
            'frames to render, e.g. 1-10, 1-100x5 or 1,5,9 (repeatable; default: profile: ' +
              "overrides.frameRanges, else the file's range)",
            collectRanges,
            [],
          )
          .option(
            '--camera <name>',
            'camera object to render from (default: profile: overrides.activeCamera, else the scene camera)',
          )
          .option(
            '--view-layer <name>',
            'view layer to render (default: profile: overrides.activeViewLayer, else every enabled layer)',
          )
          .option(
            '--format <format>',
            'output format, e.g. PNG, JPEG, OPEN_EXR (env: RENDERBRIDGE_OUTPUT_FORMAT; else profile: ' +
              "outputFormat; default: the file's)",
          )
          .option(
            '--video',
            'also encode an MP4 of the frames (env: RENDERBRIDGE_VIDEO; else profile: video; default: no video)',
          )
          .option('--no-video', 'no MP4, whatever the environment or the profile says')
          .option(
            '--out <dir>',
            'folder the outputs go to (default: <downloads folder>/<name>-<job id>; the downloads folder from ' +
              'env: RENDERBRIDGE_DOWNLOADS, else profile: downloadsDir)',
          )
          .option('--no-wait', 'return once the render has started; print the job id')
          .option('--no-download', 'do not download the outputs when the job completes')
          .option(
            '--estimate',
            'once validated, estimate the render (time, cost, memory) from sample frames, show it and ask ' +
              'before rendering (extension estimate); the render is then not waited for',
          )
          .option('--yes', 'with --estimate: render without asking')
          .option(
            '--blender <path>',
            "Blender used to find the .blend's files (env: RENDERBRIDGE_BLENDER; else profile: blender; " +
              'default: blender on PATH)',
          ),
      ),
    ),
  ).action(async (target: string, o: SubmitOptions) => {
    process.exitCode = await submit(target, o);
  });
}

function collectRanges(v: string, previous: string[]): string[] {
  return v.split(',').reduce((acc, r) => (r.trim() ? collect(r.trim(), acc) : acc), previous);
}

async function submit(target: string, o: SubmitOptions): Promise<ExitCode> {
  const config = cliConfig(o, o.blender ? { blender: o.blender } : {}, { outputFormat: o.format, video: o.video });
  const clients = clientProvider(config);
  // Under the state folder, not the temp folder (often another filesystem, tmpfs): the pack's
  // snapshot hard-links the project's files, which only works within one filesystem.
  await mkdir(path.join(config.stateDir, 'packs'), { recursive: true, mode: 0o700 });
  const workDir = await mkdtemp(path.join(config.stateDir, 'packs', 'cli-'));
  // The daemon's hash cache (state folder): a resubmit reads only the files that changed, with or without a daemon.
  const hashCache = new HashCache({ file: path.join(config.stateDir, HASH_CACHE_FILE) });
  const packer = createPacker({
    workDir,
    trace: createTracer({ blender: config.blender }),
    createdBy: `renderbridge-cli/${VERSION}`,
    hashCache,
  });
  const display = createDisplay({ json: Boolean(o.json), quiet: Boolean(o.quiet) });
  const abort = new AbortController();
  const onSigint = (): void => abort.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  let lastStep: SubmissionStep = 'packing';
  let stopProgress = (): void => {};
  try {
    if (!o.json && !o.quiet) display.note(`packing ${target}…`);
    const pack = await packer.pack(
      { path: path.resolve(target) },
      { signal: abort.signal, onProgress: (done, total, phase) => display.pack(done, total, phase) },
    );
    reportPack(pack, display);
    const settings = withSubmitDefaults(settingsFrom(o), submitDefaultsOf(config));
    const final = await runSubmission(
      // --estimate: the submission ends once the job is validated (`check`); the estimate comes next.
      {
        packId: pack.packId,
        settings,
        download: o.download,
        ...(o.out ? { outDir: path.resolve(o.out) } : {}),
        ...(o.estimate ? { mode: 'check' as const } : {}),
      },
      { clients, packer, downloadsDir: config.downloadsDir },
      (s) => {
        display.submission(s);
        if (s.step !== 'failed') lastStep = s.step;
        if (s.step === 'rendering' && s.jobId && o.wait) stopProgress = pollProgress(s.jobId, clients, display);
        if (s.step === 'done' || s.step === 'failed') stopProgress();
      },
      { noWait: !o.wait, signal: abort.signal, onDownload: (d) => display.download(d) },
    );
    stopProgress();
    display.stop();
    if (o.estimate && final.step === 'done' && final.jobId) {
      const scheduling = settings.scheduling ? { scheduling: settings.scheduling } : {};
      return await estimateThenRender(
        await clients.client(),
        final.jobId,
        renderConfigFrom(settings),
        { ...o, ...scheduling },
        { submission: final },
      );
    }
    return finish(final, pack, lastStep, o);
  } finally {
    stopProgress();
    display.stop();
    process.off('SIGINT', onSigint);
    await rm(workDir, { recursive: true, force: true });
  }
}

export function settingsFrom(
  o: Pick<SubmitOptions, 'frames' | 'camera' | 'viewLayer' | 'format' | 'video'> &
    RenderOverrides &
    Partial<SchedulingOptions>,
): SubmitSettings {
  const scheduling = schedulingFrom(o);
  return {
    ...(scheduling ? { scheduling } : {}),
    ...overrideSettings(o),
    ...(o.frames.length > 0 ? { frames: o.frames } : {}),
    ...(o.camera ? { camera: o.camera } : {}),
    ...(o.viewLayer ? { viewLayer: o.viewLayer } : {}),
    ...(o.format ? { format: o.format.toUpperCase() } : {}),
    ...(o.video !== undefined ? { video: o.video } : {}),
  };
}

function reportPack(pack: PackResult, display: Display): void {
  for (const w of pack.warnings) display.note(`warning: ${w.message}`);
  if (pack.missing.length > 0) {
    display.note(`warning: ${pack.missing.length} file(s) the scene uses are missing and were not packed:`);
    for (const m of pack.missing.slice(0, 20))
      display.note(`  ${m.path}${m.usedBy.length ? ` (used by ${m.usedBy.join(', ')})` : ''}`);
  }
  display.note(
    `packed ${pack.fileCount} file(s), ${formatBytes(pack.bytes)}; ` +
      `scene ${pack.sceneFile || '(chosen by the service)'}`,
  );
}

/** Render progress while the job renders (GET /jobs/{id}/progress once a second). */
function pollProgress(jobId: string, clients: ReturnType<typeof clientProvider>, display: Display): () => void {
  let stopped = false;
  const timer = setInterval(() => {
    void clients
      .client()
      .then((c) => c.getJobProgress(jobId))
      .then((p) => {
        if (!stopped) display.progress(p);
      })
      .catch(() => undefined);
  }, 1000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** Prints the outcome and picks the exit code from the step the submission failed at. */
function finish(s: Submission, pack: PackResult, lastStep: SubmissionStep, o: SubmitOptions): ExitCode {
  const code = exitCodeOf(s, lastStep);
  if (o.json) {
    createOutput(o).result(
      {
        submission: s,
        pack: {
          sceneFile: pack.sceneFile,
          bytes: pack.bytes,
          fileCount: pack.fileCount,
          missing: pack.missing,
          warnings: pack.warnings,
        },
      },
      code,
    );
    return code;
  }
  if (s.step === 'failed') {
    const e = s.error;
    throw new CliError(
      `${lastStep} failed${s.jobId ? ` (job ${s.jobId})` : ''}: ${e ? `${e.name}: ${e.message}` : 'unknown error'}`,
      code,
    );
  }
  const out = createOutput(o);
  if (s.step === 'rendering')
    out.line(`Job ${s.jobId} is rendering. Follow it with: renderbridge jobs watch ${s.jobId}`);
  else out.line(`Job ${s.jobId} completed.${s.outDir ? ` Outputs: ${s.outDir}` : ''}`);
  return code;
}

export function exitCodeOf(s: Submission, lastStep: SubmissionStep): ExitCode {
  if (s.step !== 'failed') return EXIT.OK;
  const name = s.error?.name ?? '';
  if (name === 'NO_API_KEY' || name === 'UNAUTHORIZED') return EXIT.AUTH;
  if (name === 'SERVICE_UNREACHABLE') return EXIT.SERVICE_UNREACHABLE;
  if (name === 'JOB_CANCELED') return EXIT.CANCELED;
  if (name.startsWith('DOWNLOAD') || name === 'SIZE_MISMATCH' || name === 'NETWORK_ERROR') return EXIT.DOWNLOAD_FAILED;
  if (lastStep === 'validating') return EXIT.VALIDATION_FAILED;
  if (lastStep === 'rendering') return EXIT.RENDER_FAILED;
  return EXIT.FAILURE;
}
