// Ready signals over PostgreSQL: NOTIFY on the pool, LISTEN on one connection of its own that
// comes back by itself after a server restart or a network cut (signals sent meanwhile are
// lost, which the pollers cover).
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { SignalBus } from '../ready-signal.js';
import type { DB } from '../sql/schema.js';
import { scrub } from './errors.js';

/** One channel per database: every farm process sharing the database shares the queue. */
const CHANNEL = 'renderbridge_tasks_ready';

export interface PgSignalBusOptions {
  /** Longest pause between two reconnect attempts of the listening connection. Default 5000 ms. */
  maxReconnectDelayMs?: number;
  /** Gets connection failures, password removed. Default: dropped. */
  onError?: (err: Error) => void;
}

export class PgSignalBus implements SignalBus {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly url: string,
    private readonly opts: PgSignalBusOptions = {},
  ) {}

  async publish(message: string): Promise<void> {
    await sql`select pg_notify(${CHANNEL}, ${message})`.execute(this.db);
  }

  async subscribe(onMessage: (message: string) => void): Promise<() => Promise<void>> {
    const onError = (err: unknown) =>
      this.opts.onError?.(
        new Error(`PostgreSQL task signals: ${scrub(err instanceof Error ? err.message : String(err), this.url)}`),
      );
    const maxDelay = this.opts.maxReconnectDelayMs ?? 5000;
    let client: pg.Client | undefined;
    let closed = false;
    let failures = 0;
    let timer: NodeJS.Timeout | undefined;
    const connect = async (): Promise<void> => {
      const c = new pg.Client({ connectionString: this.url, application_name: 'renderbridge-signals' });
      client = c;
      c.on('notification', (n) => {
        if (n.channel === CHANNEL) onMessage(n.payload ?? '');
      });
      c.on('error', (err) => {
        onError(err);
        again(c);
      });
      c.on('end', () => again(c));
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      failures = 0;
    };
    // A failed listener (or a first connect that failed) tries again with growing pauses.
    const again = (c: pg.Client | undefined) => {
      if (closed || timer || (c && client !== c)) return;
      client = undefined;
      c?.end().catch(() => undefined);
      const delay = Math.min(100 * 2 ** Math.min(failures++, 10), maxDelay);
      timer = setTimeout(() => {
        timer = undefined;
        if (!closed) void start();
      }, delay);
    };
    const start = () =>
      connect().catch((err: unknown) => {
        onError(err);
        again(client);
      });
    await start();
    return async () => {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    };
  }
}
