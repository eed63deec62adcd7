// Starts the daemon: builds its parts (keychain, API-key client provider, event bus, job tracker,
// and the Packer/Submissions/Downloads the caller wires in), listens on 127.0.0.1 only, writes
// the state file (port + token, mode 0600) and starts tracking. close() ends the SSE streams,
// stops the tracker, closes the server and removes the state file.
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { RenderJobClientOptions } from '../shared/client/options.js';
import { ApiKeyProvider } from './keychain/api-key.js';
import { buildDaemonApp } from './app.js';
import type { DaemonConfig } from './config.js';
import { DaemonError } from './errors.js';
import { EventBus, type EventBusOptions } from './track/events.js';
import { createDaemonLogger } from './http/logging.js';
import { KeytarKeychain } from './keychain/keytar.js';
import { ProfileKeychain } from './keychain/profile-keychain.js';
import { followConfigFile, type LiveSetting } from './follow-config.js';
import type { ClientProvider, Downloads, Keychain, Packer, Submissions, Tracker } from './ports.js';
import { findLiveDaemon, newToken, removeStateFile, writeStateFile } from './state-file.js';
import { JobTracker, type JobTrackerOptions } from './track/tracker.js';

/** What the Packer/Submissions/Downloads factories get. */
export interface DaemonPartsContext {
  config: DaemonConfig;
  events: EventBus;
  /** Clients of the configured service with the current API key (clients retry as the shared client does). */
  clients: ClientProvider;
  logger: Logger;
}

export interface StartDaemonOptions {
  /** Reported by GET /health and written to the state file. Default `dev` (the CLI passes the package version). */
  version?: string;
  /** pino logger, or false for none. Default: createDaemonLogger('info') on stdout. */
  logger?: Logger | false;
  /**
   * Where the API key is read first. Default: the OS keychain entry of config.profile through keytar; null:
   * RENDERBRIDGE_API_KEY only.
   */
  keychain?: Keychain | null;
  /**
   * Re-reads config.toml (with the daemon's flags) when config.configFile changes; default: the file is not followed.
   */
  reloadConfig?: () => DaemonConfig;
  /**
   * Told which settings an edit of config.toml changed, after they applied to the config
   * (startBridgeDaemon re-watches the hot folder).
   */
  onConfigChange?: (changed: LiveSetting[]) => void;
  /** Where RENDERBRIDGE_API_KEY is read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Options of the service clients (timeouts, fetch). Default: the shared client's defaults. */
  clientOptions?: Omit<RenderJobClientOptions, 'baseUrl' | 'apiKey'>;
  /** SSE knobs (heartbeat, buffer bound). Default: EventBus defaults (15 s, 1 MiB). */
  sse?: Omit<EventBusOptions, 'logger'>;
  /** Tracker knobs beyond config.pollActiveMs/pollIdleMs. Default: JobTracker defaults. */
  tracker?: Pick<JobTrackerOptions, 'maxBackoffMs' | 'pageSize' | 'initialPages' | 'maxTrackedJobs'>;
  /** Builds the Downloads port. Default: none (POST /jobs/:id/download answers DAEMON_NOT_FOUND, nothing downloads). */
  createDownloads?: (ctx: DaemonPartsContext) => Downloads;
  /** Builds the Packer port. Default: none (POST /pack answers DAEMON_NOT_FOUND). */
  createPacker?: (ctx: DaemonPartsContext) => Packer;
  /** Builds the Submissions port. Default: none (POST /submissions answers DAEMON_NOT_FOUND). */
  createSubmissions?: (
    ctx: DaemonPartsContext & { tracker: Tracker; packer: Packer; downloads: Downloads },
  ) => Submissions;
}

export interface RunningDaemon {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  port: number;
  token: string;
  stateFile: string;
  app: FastifyInstance;
  events: EventBus;
  tracker: JobTracker;
  clients: ApiKeyProvider;
  close(): Promise<void>;
}

/** Why the daemon did not start: another daemon runs, or the port is taken. The message says what to do. */
export class DaemonStartError extends Error {
  override readonly name = 'DaemonStartError';
  constructor(
    readonly code: 'ALREADY_RUNNING' | 'PORT_IN_USE',
    message: string,
    readonly pid?: number,
  ) {
    super(message);
  }
}

function unwired(part: string): DaemonError {
  return new DaemonError(
    'DAEMON_NOT_FOUND',
    `This daemon was started without ${part}: start it with \`renderbridge daemon\` for the full API.`,
  );
}

const NO_PACKER: Packer = {
  pack: () => Promise.reject(unwired('a packer')),
  get: () => undefined,
  zip: () => Promise.reject(unwired('a packer')),
  discard: async () => {},
};
const NO_SUBMISSIONS: Submissions = {
  start: () => {
    throw unwired('submissions');
  },
  get: () => undefined,
  list: () => [],
  settled: () => Promise.reject(unwired('submissions')),
};
const NO_DOWNLOADS: Downloads = {
  start: () => {
    throw unwired('downloads');
  },
  get: () => undefined,
  settled: () => Promise.reject(unwired('downloads')),
};

async function alreadyRunning(stateDir: string): Promise<DaemonStartError | undefined> {
  const live = await findLiveDaemon(stateDir);
  if (!live) return undefined;
  return new DaemonStartError(
    'ALREADY_RUNNING',
    `another renderbridge daemon (pid ${live.pid}) is running on 127.0.0.1:${live.port} (state ` +
      `file ${live.stateFile}): ` +
      `use it, or stop it with \`kill ${live.pid}\` and start again`,
    live.pid,
  );
}

export async function startDaemon(config: DaemonConfig, options: StartDaemonOptions = {}): Promise<RunningDaemon> {
  const running = await alreadyRunning(config.stateDir);
  if (running) throw running;

  const logger =
    options.logger === undefined ? createDaemonLogger('info') : options.logger || pino({ level: 'silent' });
  // The entry of the profile in use at each read, so a profile switched in config.toml switches keys.
  const keychain =
    options.keychain === undefined
      ? new ProfileKeychain(
          () => config.profile,
          (entry) => new KeytarKeychain(entry),
        )
      : options.keychain;
  const serviceUrl = (): string => config.serviceUrl;
  const env = options.env ?? process.env;
  const clients = new ApiKeyProvider({
    serviceUrl,
    keychain,
    env,
    clientOptions: { reconnectPatienceMs: config.reconnectPatience * 1000, ...options.clientOptions },
    logger: logger.child({ component: 'api-key' }),
  });
  // The tracker handles 429s and errors itself (Retry-After, back-off): its client does not retry,
  // nor wait for a lost connection (its next poll is its retry).
  const trackerClients = new ApiKeyProvider({
    serviceUrl,
    keychain,
    env,
    clientOptions: { ...options.clientOptions, maxRetries: 0, reconnectPatienceMs: 0 },
  });
  const events = new EventBus({ ...options.sse, logger: logger.child({ component: 'events' }) });
  const ctx: DaemonPartsContext = { config, events, clients, logger };
  const downloads = options.createDownloads?.(ctx);
  const tracker = new JobTracker({
    clients: trackerClients,
    events,
    ...(downloads ? { downloads } : {}),
    pollActiveMs: config.pollActiveMs,
    pollIdleMs: config.pollIdleMs,
    ...options.tracker,
    logger: logger.child({ component: 'tracker' }),
  });
  const packer = options.createPacker?.(ctx) ?? NO_PACKER;
  const submissions =
    options.createSubmissions?.({ ...ctx, tracker, packer, downloads: downloads ?? NO_DOWNLOADS }) ?? NO_SUBMISSIONS;

  const token = newToken();
  const startedAt = new Date().toISOString();
  const version = options.version ?? 'dev';
  const app = buildDaemonApp({
    config,
    token,
    version,
    startedAt,
    events,
    clients,
    tracker,
    packer,
    submissions,
    downloads: downloads ?? NO_DOWNLOADS,
    logger: options.logger === false ? false : logger,
  });
  try {
    // 127.0.0.1 only: never 0.0.0.0, never ::, whatever the config says.
    await app.listen({ host: '127.0.0.1', port: config.port });
  } catch (err) {
    await app.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw (
        (await alreadyRunning(config.stateDir)) ??
        new DaemonStartError(
          'PORT_IN_USE',
          `port ${config.port} on 127.0.0.1 is already in use by another program: choose another with --port ` +
            `or RENDERBRIDGE_DAEMON_PORT (0 picks a free one)`,
        )
      );
    }
    throw err;
  }
  const port = (app.server.address() as { port: number }).port;
  let stateFile: string;
  try {
    stateFile = await writeStateFile(config.stateDir, {
      version: 1,
      pid: process.pid,
      port,
      token,
      startedAt,
      daemonVersion: version,
    });
  } catch (err) {
    await app.close();
    throw err;
  }
  tracker.start();
  const reload = options.reloadConfig;
  const follower = reload
    ? await followConfigFile(config, {
        reload,
        logger: logger.child({ component: 'config' }),
        onChange: (changed) => {
          if (changed.includes('serviceUrl') || changed.includes('profile')) {
            clients.invalidate();
            trackerClients.invalidate();
          }
          options.onConfigChange?.(changed);
        },
      }).catch((err: unknown) => {
        logger.warn(
          { reason: (err as Error).message },
          'config.toml cannot be followed: edits apply at the next start',
        );
        return null;
      })
    : null;
  logger.info({ port, stateFile, serviceUrl: config.serviceUrl }, 'daemon listening on 127.0.0.1');

  let closing: Promise<void> | undefined;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    token,
    stateFile,
    app,
    events,
    tracker,
    clients,
    close: () =>
      (closing ??= (async () => {
        await follower?.close();
        await tracker.stop();
        await app.close();
        await removeStateFile(config.stateDir, token);
        logger.info({}, 'daemon stopped');
      })()),
  };
}
