// Shared steps of the daemon tests: a real daemon (startDaemon) on a free port with its state in a
// temp folder and its log captured, raw HTTP calls with the token, and an SSE reader that parses
// the stream exactly as a client would.
import { mkdtemp, rm } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startBridgeDaemon, type RunningBridgeDaemon } from '../../daemon/assemble.js';
import { defaultDaemonConfig, type DaemonConfig } from '../../daemon/config.js';
import { createDaemonLogger } from '../../daemon/http/logging.js';
import { startDaemon, type RunningDaemon, type StartDaemonOptions } from '../../daemon/server.js';
import { createPacker } from '../../daemon/pack/packer.js';
import type { ClientProvider, Packer } from '../../daemon/ports.js';
import { createTracer } from '../../daemon/trace.js';
import { startE2E, waitUntil, type E2E } from '../helpers/e2e.js';

export interface TestDaemon {
  daemon: RunningDaemon;
  config: DaemonConfig;
  stateDir: string;
  /** Every log line the daemon wrote. */
  logs: string[];
  close(): Promise<void>;
}

export async function startTestDaemon(
  config: Partial<DaemonConfig> & { serviceUrl: string },
  options: StartDaemonOptions & { apiKey?: string } = {},
): Promise<TestDaemon> {
  const stateDir = config.stateDir ?? (await mkdtemp(path.join(tmpdir(), 'rb-daemon-')));
  const full = defaultDaemonConfig(
    {},
    { port: 0, pollActiveMs: 200, pollIdleMs: 1000, webhookSecret: null, hotFolder: null, ...config, stateDir },
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const { apiKey, ...rest } = options;
  const daemon = await startDaemon(full, {
    keychain: null,
    env: apiKey ? { RENDERBRIDGE_API_KEY: apiKey } : {},
    logger: createDaemonLogger('debug', sink),
    version: '9.8.7-test',
    ...rest,
  });
  return {
    daemon,
    config: full,
    stateDir,
    logs,
    close: async () => {
      await daemon.close();
      if (!config.stateDir) await rm(stateDir, { recursive: true, force: true });
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  json: unknown;
}

/** One HTTP request with node:http, so tests control every header (Host included). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Calls the daemon with its token; a body is sent as JSON. */
export function daemonCall(d: RunningDaemon) {
  return (method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> =>
    rawRequest(`${d.origin}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${d.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
}

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comments: string[];
  /** The frame as sent, without its terminating blank line. */
  raw: string;
}

export interface SseReader {
  status: number;
  headers: IncomingMessage['headers'];
  frames: SseFrame[];
  /** Frames with an event, data parsed as JSON. */
  events(): { event: string; data: unknown; id: string | undefined }[];
  ended: boolean;
  waitFor<T>(what: string, probe: (r: SseReader) => T | undefined | false, timeoutMs?: number): Promise<T>;
  close(): void;
}

/** Opens `GET /events` and parses frames as they arrive (blank-line separated, `:` comments). */
export function openSse(origin: string, token: string, headers: Record<string, string> = {}): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/events`,
      { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } },
      (res) => {
        let buffer = '';
        const reader: SseReader = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          frames: [],
          ended: false,
          events: () =>
            reader.frames
              .filter((f) => f.event !== undefined)
              .map((f) => ({ event: f.event!, data: JSON.parse(f.data ?? 'null') as unknown, id: f.id })),
          waitFor: (what, probe, timeoutMs = 10_000) =>
            waitUntil(what, () => probe(reader), { timeoutMs, intervalMs: 20 }),
          close: () => req.destroy(),
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let at: number;
          while ((at = buffer.indexOf('\n\n')) >= 0) {
            const raw = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const frame: SseFrame = { comments: [], raw };
            for (const line of raw.split('\n')) {
              if (line.startsWith(':')) frame.comments.push(line.slice(1).trim());
              else {
                const colon = line.indexOf(':');
                const field = colon < 0 ? line : line.slice(0, colon);
                const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
                if (field === 'id' || field === 'event' || field === 'retry') frame[field] = value;
                else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
              }
            }
            reader.frames.push(frame);
          }
        });
        res.on('end', () => (reader.ended = true));
        res.on('close', () => (reader.ended = true));
        res.on('error', () => (reader.ended = true));
        resolve(reader);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * The daemon with every real part (startBridgeDaemon) for a test service: fast polling, its zips
 * under `work/packs`, downloads under `work/daemon-outputs`, no keychain (the key from `apiKey`),
 * its log lines collected in `logs` when given.
 */
export function startTestBridge(opts: {
  serviceUrl: string;
  apiKey: string;
  work: string;
  stateDir: string;
  logs?: string[];
}): Promise<RunningBridgeDaemon> {
  const config = defaultDaemonConfig(
    {},
    {
      serviceUrl: opts.serviceUrl,
      port: 0,
      stateDir: opts.stateDir,
      workDir: path.join(opts.work, 'packs'),
      downloadsDir: path.join(opts.work, 'daemon-outputs'),
      pollActiveMs: 250,
      pollIdleMs: 1000,
      hotFolder: null,
      webhookSecret: null,
    },
  );
  const logs = opts.logs;
  const logger = logs
    ? createDaemonLogger(
        'info',
        new Writable({
          write(chunk: Buffer, _enc, cb) {
            logs.push(chunk.toString());
            cb();
          },
        }),
      )
    : false;
  return startBridgeDaemon(config, {
    keychain: null,
    env: { RENDERBRIDGE_API_KEY: opts.apiKey },
    logger,
    version: '1.2.3-test',
  });
}

export interface SubmitStack {
  e2e: E2E;
  /** A temp folder, removed by close(). */
  scratch: string;
  /** The real packer (headless-Blender tracing), writing under `scratch/packs`. */
  packer: Packer;
  /** The e2e client, as the daemon's ClientProvider. */
  clients: ClientProvider;
  close(): Promise<void>;
}

/** A reference service with a worker, plus the packer and client provider submissions need. */
export async function startSubmitStack(prefix: string): Promise<SubmitStack> {
  const scratch = await mkdtemp(path.join(tmpdir(), prefix));
  const e2e = await startE2E();
  return {
    e2e,
    scratch,
    packer: createPacker({
      workDir: path.join(scratch, 'packs'),
      trace: createTracer({ blender: 'blender' }),
      createdBy: 'renderbridge-test',
    }),
    clients: { client: async () => e2e.client, apiKeySource: async () => 'env' },
    close: async () => {
      await e2e.svc.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
