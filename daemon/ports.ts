// Seams between the daemon's parts. The HTTP app (app.ts) and the CLI depend on these
// interfaces; each part implements one and gets its collaborators passed in (no singletons).
import type { RenderJobClient } from '../shared/client/client.js';
import type { CollectedDependency } from '../shared/pack/dependencies.js';
import type { DaemonEvent } from '../shared/daemon/api.js';
import type { DownloadState, TrackedJob } from '../shared/daemon/job-schemas.js';
import type {
  DaemonWarning,
  PackedFile,
  PackRequest,
  PackResult,
  PackState,
  Submission,
  SubmitRequest,
} from '../shared/daemon/submission-schemas.js';

/** Fan-out of daemon events (SSE subscribers, CLI progress bars, the tray). */
export interface EventSink {
  publish(event: DaemonEvent): void;
}

/** The OS keychain entry that holds the API key (KEYCHAIN_SERVICE / KEYCHAIN_ACCOUNT of shared/constants.ts). */
export interface Keychain {
  get(): Promise<string | null>;
  set(secret: string): Promise<void>;
  /** True when an entry was removed. */
  delete(): Promise<boolean>;
}

/** A client for the configured service with the current API key; throws DaemonError NO_API_KEY when there is none. */
export interface ClientProvider {
  client(): Promise<RenderJobClient>;
  /** Where the key came from, without reading it out; null when none is configured. */
  apiKeySource(): Promise<'keychain' | 'env' | null>;
}

/**
 * Lists a .blend's external files by running the add-on's collector in headless Blender. Without
 * Blender it returns no dependencies and a BLENDER_NOT_FOUND warning (the file is packed as is).
 */
export type TraceFn = (
  blendFile: string,
  options?: { signal?: AbortSignal },
) => Promise<{ dependencies: CollectedDependency[]; warnings: DaemonWarning[] }>;

/** What a packer does now: tracing a .blend's files with Blender, hashing the files, or writing a zip. */
export type PackPhase = NonNullable<PackState['phase']>;

/** Bytes of the phase done so far and in all (0 and 0 while tracing, which has no byte count). */
export type PackProgress = (bytesDone: number, bytesTotal: number, phase: PackPhase) => void;

/** What the upload of a pack reads: the files as they were taken when packed (daemon/pack/snapshot.ts). */
export interface UploadSource {
  /** The pack's files, each `source` being the file to read (in the pack's folder, or the artist's). */
  files: PackedFile[];
  /** Throws PACK_CHANGED when the file at `source` no longer holds what was packed; run before and after each part. */
  check(source: string): Promise<void>;
  /** The artist's file behind `source`, for messages. */
  original(source: string): string;
}

/** Packs (POST /pack, POST /packs, a submission's own), kept until submitted, discarded or expired. */
export interface Packer {
  /**
   * Plans the project and checksums its files (the content-addressed upload sends `files`);
   * `zipPath` is null until zip() ran, except for a user's own .zip. `id` names the pack (default
   * a random UUID); `onProgress` follows the phases.
   */
  pack(
    req: PackRequest,
    options?: { id?: string; signal?: AbortSignal; onProgress?: PackProgress },
  ): Promise<PackResult>;
  get(packId: string): PackResult | undefined;
  /**
   * Writes the pack's zip (for a service without the content-addressed upload), once: calls made
   * while it is written share that run. Answers the zip's path; PACK_FAILED when a file changed
   * since it was hashed, DAEMON_NOT_FOUND for an unknown pack.
   */
  zip(packId: string, options?: { signal?: AbortSignal; onProgress?: PackProgress }): Promise<string>;
  /** Forgets the pack and removes what the packer wrote for it (its manifest, its snapshot, its zip). */
  discard(packId: string): Promise<void>;
  /**
   * What an upload of the pack reads; undefined for an unknown pack and a user's own zip
   * (then `files` are read as listed).
   */
  uploadSource?(packId: string): UploadSource | undefined;
}

/** Packs made in the background (POST /packs), published as `pack` events as they move. */
export interface BackgroundPacks {
  /** Starts packing; answers the first state at once. */
  start(req: PackRequest): PackState;
  /** The pack's state; undefined once expired (or discarded after a submission used it). */
  get(packId: string): PackState | undefined;
  /** Stops the packs in progress and the expiry timers. */
  close(): Promise<void>;
}

/** Runs submissions (pack -> upload -> create -> validate -> render) and reports each step as a `submission` event. */
export interface Submissions {
  start(req: SubmitRequest): Submission;
  get(id: string): Submission | undefined;
  list(): Submission[];
  /** Resolves when the submission reaches done or failed. */
  settled(id: string): Promise<Submission>;
}

/** Downloads a job's outputs into its folder, publishing `download` events. */
export interface Downloads {
  start(jobId: string, outDir?: string): DownloadState;
  get(jobId: string): DownloadState | undefined;
  /** Resolves when the download is done or failed. */
  settled(jobId: string): Promise<DownloadState>;
}

/** The workspace's jobs as last seen, refreshed by polling and webhooks. */
export interface Tracker {
  list(): TrackedJob[];
  get(jobId: string): Promise<TrackedJob>;
  cancel(jobId: string): Promise<TrackedJob>;
  /** Poll soon (a submission started a job, a webhook arrived). */
  kick(): void;
  /** Where a job's outputs go when it completes (set by submissions); null means do not download. */
  setOutDir(jobId: string, outDir: string | null): void;
}
