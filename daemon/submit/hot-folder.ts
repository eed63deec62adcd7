// The hot folder: a .blend or .zip written into the watched folder is submitted once it is fully
// written, and its outputs land beside it in `<stem>_renders/`. What was submitted is remembered
// (name, size, mtime) in `.renderbridge-hotfolder.json` in the folder, so a restart submits only
// new or changed files.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Submission, SubmitRequest, SubmitSettings } from '../../shared/daemon/submission-schemas.js';
import type { Submissions } from '../ports.js';

/** Name of the state file the hot folder keeps in the watched folder. */
export const HOT_FOLDER_STATE_FILE = '.renderbridge-hotfolder.json';
/** Suffix of the output folder made beside each submitted file. */
export const RENDERS_SUFFIX = '_renders';

export interface HotFolderLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Runs one submission (e.g. runSubmission bound to its deps, for the CLI). */
export type SubmitFn = (req: SubmitRequest) => Submission | Promise<Submission>;

export interface HotFolderDeps {
  /** The daemon's submissions, or a function that runs one. */
  submissions: Submissions | SubmitFn;
  log: HotFolderLogger;
  /** Settings of every submission. Default `{}`: the file's own frames, camera and output. */
  settings?: SubmitSettings;
  /** How long a file's size must stay the same before it counts as fully written. Default 2000 ms. */
  stabilityMs?: number;
  /** Poll the folder instead of OS events (network shares). Default false. */
  usePolling?: boolean;
}

export interface HotFolder {
  /** Resolves once the folder's present files have been looked at. */
  ready: Promise<void>;
  /** Stops watching; submissions already started go on. */
  close(): Promise<void>;
}

interface Remembered {
  size: number;
  mtimeMs: number;
  submissionId: string | null;
  submittedAt: string;
}

interface StateFile {
  version: 1;
  /** By file name in the folder. */
  submitted: Record<string, Remembered>;
}

/** Files that are never submitted: hidden and lock files, partial downloads, Blender backups, temp files. */
export function isIgnoredName(name: string): boolean {
  const lower = name.toLowerCase();
  if (name.startsWith('.') || name.startsWith('~')) return true;
  if (/\.(part|tmp|crdownload|download|blend\d+|blend@)$/.test(lower) || lower.endsWith('~')) return true;
  return !(lower.endsWith('.blend') || lower.endsWith('.zip'));
}

/**
 * Watches `dir` (created when missing; only its top level) with chokidar. Files present at start
 * and not yet remembered are submitted too. A file is taken once its size has not changed for
 * `stabilityMs` (awaitWriteFinish); a file rewritten later with another size or mtime is submitted
 * again. Each submission downloads into `<dir>/<stem>_renders/`.
 */
export async function watchHotFolder(dir: string, deps: HotFolderDeps): Promise<HotFolder> {
  const root = path.resolve(dir);
  await mkdir(root, { recursive: true });
  const statePath = path.join(root, HOT_FOLDER_STATE_FILE);
  const state = await loadState(statePath, deps.log);
  const inFlight = new Set<string>();
  let saving: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    const text = JSON.stringify(state, null, 2);
    saving = saving.then(async () => {
      const tmp = `${statePath}.${process.pid}.tmp`;
      await writeFile(tmp, text);
      await rename(tmp, statePath);
    });
    return saving.catch((err: unknown) =>
      deps.log.warn({ err: String(err), file: statePath }, 'hot folder: could not save its state file'),
    );
  };

  const take = async (file: string, stats: Stats | undefined): Promise<void> => {
    const name = path.basename(file);
    if (path.dirname(path.resolve(file)) !== root || isIgnoredName(name) || !stats?.isFile()) return;
    const seen = state.submitted[name];
    if (inFlight.has(name)) return;
    if (seen && seen.size === stats.size && seen.mtimeMs === stats.mtimeMs) {
      // Said once per file per watch (at start, for each file already there): why it was not taken.
      deps.log.info({ file: name, submissionId: seen.submissionId }, 'hot folder: already submitted, left as is');
      return;
    }
    inFlight.add(name);
    try {
      const req: SubmitRequest = {
        pack: { path: path.join(root, name) },
        settings: deps.settings ?? {},
        outDir: path.join(root, `${name.replace(/\.(blend|zip)$/i, '')}${RENDERS_SUFFIX}`),
        download: true,
      };
      // Remembered before starting: a crash after this never submits the file twice.
      state.submitted[name] = {
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        submissionId: null,
        submittedAt: new Date().toISOString(),
      };
      await save();
      const started = submit(deps.submissions, req);
      const first = await started.first;
      state.submitted[name]!.submissionId = first.id;
      await save();
      deps.log.info({ file: name, submissionId: first.id, outDir: req.outDir }, 'hot folder: submitted');
      void started.final.then((s) => {
        if (s.step === 'failed')
          deps.log.warn({ file: name, submissionId: s.id, error: s.error }, 'hot folder: submission failed');
      });
    } catch (err) {
      deps.log.warn({ file: name, err: String(err) }, 'hot folder: could not submit');
    } finally {
      inFlight.delete(name);
    }
  };

  const watcher: FSWatcher = watch(root, {
    depth: 0,
    ignoreInitial: false,
    alwaysStat: true,
    usePolling: deps.usePolling ?? false,
    awaitWriteFinish: { stabilityThreshold: deps.stabilityMs ?? 2000, pollInterval: 100 },
    // Folders inside (the `_renders` outputs among them) are never entered; depth 0 lists them only.
    ignored: (p: string, stats?: Stats) =>
      path.resolve(p) !== root &&
      (stats?.isDirectory() === true || (stats?.isFile() === true && isIgnoredName(path.basename(p)))),
  });
  watcher.on('add', (file, stats) => void take(file, stats));
  watcher.on('change', (file, stats) => void take(file, stats));
  watcher.on('error', (err) => deps.log.warn({ err: String(err), dir: root }, 'hot folder: watch error'));
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  deps.log.info({ dir: root }, 'hot folder: watching');

  return {
    ready,
    async close() {
      await watcher.close();
      await saving.catch(() => undefined);
      deps.log.info({ dir: root }, 'hot folder: stopped watching');
    },
  };
}

/** The submission's first state (its id) and its final one, whichever kind of submitter. */
function submit(
  submissions: Submissions | SubmitFn,
  req: SubmitRequest,
): { first: Promise<Submission>; final: Promise<Submission> } {
  if (typeof submissions === 'function') {
    const final = Promise.resolve(submissions(req));
    return { first: final, final };
  }
  const first = submissions.start(req);
  return { first: Promise.resolve(first), final: submissions.settled(first.id) };
}

async function loadState(file: string, log: HotFolderLogger): Promise<StateFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { version: 1, submitted: {} };
  }
  try {
    const parsed = JSON.parse(text) as Partial<StateFile>;
    if (parsed.version === 1 && parsed.submitted && typeof parsed.submitted === 'object')
      return { version: 1, submitted: parsed.submitted };
  } catch {
    // fall through
  }
  log.warn({ file }, 'hot folder: unreadable state file, starting afresh (files already there are submitted again)');
  return { version: 1, submitted: {} };
}
