// Exit codes of every renderbridge command (listed in docs/guides/pipeline.md): scripts branch on them.
export const EXIT = {
  OK: 0,
  /** Anything else; the message says why. */
  FAILURE: 1,
  /** Wrong command line. */
  USAGE: 2,
  /** The job failed validation (missing camera, unreadable file...): fix the project. */
  VALIDATION_FAILED: 3,
  /** The job failed while rendering or finishing. */
  RENDER_FAILED: 4,
  /** The job was canceled. */
  CANCELED: 5,
  /** The service could not be reached. */
  SERVICE_UNREACHABLE: 6,
  /** No API key configured, or the service refused it. */
  AUTH: 7,
  /** Outputs could not all be downloaded. */
  DOWNLOAD_FAILED: 8,
  /** `jobs wait --timeout` ran out before the job finished (the job goes on). */
  TIMEOUT: 9,
  /** The service does not offer this feature (e.g. task logs, an extension it does not advertise). */
  NOT_OFFERED: 10,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
