// Every output of a completed job into one folder: frames, compositor outputs in their
// `relativePath` folders, videos (and the zips when asked). Usable without a daemon (the CLI).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ErrorBody, ErrorDetail } from '../../shared/api/error-body.js';
import type { Downloads as DownloadsAnswer } from '../../shared/api/downloads.js';
import { ApiError } from '../../shared/client/errors.js';
import { collectOutputs, fileNameFromUrl, videoLinks, zipOutputs } from '../../shared/client/downloads.js';
import { type RenderJobClient } from '../../shared/client/client.js';
import type { DownloadState } from '../../shared/daemon/job-schemas.js';
import { downloadFile, type DownloadFileOptions, type FileOutcome } from './file.js';
import { errorBodyOf, outputError } from './errors.js';
import { UnsafeOutputPathError, prepareOutputPath, safeRelativePath, uniquePath } from './output-paths.js';

export interface DownloadJobOptions extends Pick<
  DownloadFileOptions,
  'attempts' | 'baseDelayMs' | 'maxDelayMs' | 'idleTimeoutMs'
> {
  /** Files fetched at the same time. Default 4. */
  concurrency?: number;
  /** Also fetch the frames and compositor zips. Default false: the same files come one by one. */
  includeZips?: boolean;
  signal?: AbortSignal;
  /** Called as the state changes, at most every `progressIntervalMs` (the first and last states always). */
  onProgress?: (state: DownloadState) => void;
  /** Least time between two byte-count updates. Default 250 ms. */
  progressIntervalMs?: number;
}

export interface DownloadReport {
  state: DownloadState;
  /** Files kept or written, as paths relative to outDir with `/`. */
  files: { path: string; status: FileOutcome['status'] }[];
  /** Server names that were not written because they would leave the folder or are not valid. */
  refused: { name: string; reason: string }[];
  /** Files that could not be downloaded, with the error body. */
  failed: { path: string; error: ErrorBody }[];
}

interface Planned {
  /** Identity across refreshed answers (kind + server name). */
  key: string;
  name: string;
  url: string;
}

/** The files of a downloads answer, keyed so a refreshed answer gives the same file a new URL. */
export function plannedFiles(answer: DownloadsAnswer, includeZips: boolean): Planned[] {
  const files: Planned[] = collectOutputs(answer).map((o) => {
    const name = o.relativePath ?? o.fileName;
    return { key: `${o.outputType}:${name}`, name, url: o.url };
  });
  for (const v of videoLinks(answer.transforms.video)) {
    if (v.available && v.url)
      files.push({ key: `video:${v.key}:${fileNameFromUrl(v.url)}`, name: fileNameFromUrl(v.url), url: v.url });
  }
  if (includeZips) {
    for (const z of [
      ...zipOutputs(answer.transforms.framesZipOutputs),
      ...zipOutputs(answer.transforms.compositeNodesZipOutputs),
    ]) {
      files.push({ key: `zip:${z.fileName}`, name: z.fileName, url: z.url });
    }
  }
  return files;
}

/**
 * Downloads a completed job's outputs into `outDir` and resolves with what happened; never
 * rejects for a file or a server error (the state says `failed` with the error body), only for an
 * abort. Names are made safe by `safeRelativePath`; refused ones are listed and never written. An
 * expired URL (403 URL_EXPIRED) is refreshed with a new GET /jobs/{id}/downloads.
 */
export async function downloadJobOutputs(
  client: RenderJobClient,
  jobId: string,
  outDir: string,
  options: DownloadJobOptions = {},
): Promise<DownloadReport> {
  const state: DownloadState = {
    jobId,
    outDir,
    state: 'downloading',
    files: 0,
    filesDone: 0,
    bytes: 0,
    bytesDone: 0,
    skipped: 0,
    refused: [],
    error: null,
  };
  // The report and the published state share one refusal list.
  const report: DownloadReport = { state, files: [], refused: state.refused, failed: [] };
  const interval = options.progressIntervalMs ?? 250;
  let lastEmit = 0;
  const emit = (force: boolean): void => {
    const now = Date.now();
    if (!force && now - lastEmit < interval) return;
    lastEmit = now;
    options.onProgress?.({ ...state, refused: [...state.refused] });
  };
  emit(true);

  let answer: DownloadsAnswer;
  try {
    const job = await client.getJob(jobId, { signal: options.signal });
    if (job.status !== 'completed')
      return fail(
        report,
        outputError(
          'JOB_NOT_COMPLETED',
          `Job ${jobId} is "${job.status}": only a completed job has outputs to download.`,
        ),
        emit,
      );
    if (job.output?.isDeletedForClient) {
      return fail(
        report,
        outputError(
          'OUTPUTS_DELETED',
          `The outputs of job ${jobId} were deleted after their retention period; render the project again ` +
            `to get them.`,
        ),
        emit,
      );
    }
    answer = await client.getDownloads(jobId, { signal: options.signal });
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    return fail(report, errorBodyOf(err), emit);
  }

  // A folder that cannot be made fails every file the same way, and downloading again would too.
  const made = await mkdir(path.resolve(outDir), { recursive: true }).then(
    () => null,
    (err: NodeJS.ErrnoException) => err,
  );
  if (made) {
    const why =
      made.code === 'EEXIST' || made.code === 'ENOTDIR'
        ? 'a file is in the way'
        : made.code === 'EACCES' || made.code === 'EPERM' || made.code === 'EROFS'
          ? 'no permission to write there'
          : made.message;
    return fail(
      report,
      outputError(
        'DOWNLOAD_FAILED',
        `The output folder "${path.resolve(outDir)}" cannot be made (${why}): choose another folder and ` +
          `download the outputs again (renderbridge jobs download ${jobId} --out FOLDER).`,
        [],
        { outDir: path.resolve(outDir), code: made.code ?? null },
      ),
      emit,
    );
  }

  const taken = new Set<string>();
  const accepted: (Planned & { path: string })[] = [];
  for (const file of plannedFiles(answer, options.includeZips ?? false)) {
    const safe = safeRelativePath(file.name);
    if (!safe.ok) report.refused.push({ name: file.name, reason: safe.reason });
    else accepted.push({ ...file, path: uniquePath(safe.relative, taken) });
  }
  state.files = accepted.length;
  emit(true);

  // Per-file bytes on disk and full size, summed into the state.
  const onDisk = new Map<string, number>();
  const totals = new Map<string, number>();
  const recount = (): void => {
    state.bytesDone = [...onDisk.values()].reduce((a, b) => a + b, 0);
    state.bytes = accepted.reduce((sum, f) => sum + (totals.get(f.key) ?? onDisk.get(f.key) ?? 0), 0);
  };

  // One GET /downloads serves every file whose URL expired at about the same time.
  let refresh: { at: number; urls: Promise<Map<string, string>> } | null = null;
  const freshUrl = async (key: string): Promise<string | undefined> => {
    if (!refresh || Date.now() - refresh.at > 10_000) {
      const urls = client
        .getDownloads(jobId, { signal: options.signal })
        .then((a) => new Map(plannedFiles(a, true).map((f) => [f.key, f.url])));
      refresh = { at: Date.now(), urls };
    }
    return (await refresh.urls).get(key);
  };

  const fetchOne = async (file: Planned & { path: string }): Promise<void> => {
    let url = file.url;
    for (let refreshes = 0; ; refreshes++) {
      try {
        const target = await prepareOutputPath(outDir, file.path);
        const outcome = await downloadFile(url, target, {
          ...options,
          onProgress: (bytes, total) => {
            onDisk.set(file.key, bytes);
            if (total !== null) totals.set(file.key, total);
            recount();
            emit(false);
          },
        });
        report.files.push({ path: file.path, status: outcome.status });
        state.filesDone++;
        if (outcome.status === 'skipped') state.skipped++;
        return;
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (err instanceof UnsafeOutputPathError) {
          report.refused.push({ name: file.name, reason: err.message });
          return;
        }
        if (err instanceof ApiError && err.errorName === 'URL_EXPIRED' && refreshes < 2) {
          if (refreshes > 0) refresh = null;
          const next = await freshUrl(file.key).catch(() => undefined);
          if (next) {
            url = next;
            continue;
          }
        }
        report.failed.push({ path: file.path, error: errorBodyOf(err) });
        return;
      } finally {
        emit(false);
      }
    }
  };

  const queue = [...accepted];
  const workers = Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, queue.length)) }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) await fetchOne(file);
  });
  await Promise.all(workers);
  recount();

  if (report.refused.length > 0 || report.failed.length > 0) {
    const details: ErrorDetail[] = [
      ...report.refused.map((r) => ({ code: 'OUTPUT_PATH_REFUSED', path: [r.name], message: r.reason })),
      ...report.failed.map((f) => ({ code: f.error.name, path: [f.path], message: f.error.message })),
    ];
    const message = `${details.length} output file(s) were not downloaded: ${details
      .slice(0, 3)
      .map((d) => `${d.path[0]} (${d.message})`)
      .join(
        '; ',
      )}${details.length > 3 ? '; ...' : ''}. The other files are in ${outDir}; run the download again to retry.`;
    return fail(report, outputError('DOWNLOAD_INCOMPLETE', message, details), emit);
  }
  state.state = 'done';
  emit(true);
  return report;
}

function fail(report: DownloadReport, error: ErrorBody, emit: (force: boolean) => void): DownloadReport {
  report.state.state = 'failed';
  report.state.error = error;
  emit(true);
  return report;
}
