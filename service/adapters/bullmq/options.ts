// What the BullMQ task queue is opened with.
import type { RedisClientOptions } from './redis-client.js';

export interface BullmqTaskQueueOptions extends RedisClientOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`) of the Redis that holds the queue. */
  redisUrl: string;
  /** Start of every key the queue writes; instances sharing a prefix share the queue. Default 'renderbridge'. */
  prefix?: string;
  /** Longest one port call may take before it fails (Redis down). Default 15000 ms. */
  callTimeoutMs?: number;
  /**
   * Period of BullMQ's stalled-job sweep, the safety net that re-queues a task whose claim died
   * before its lease was recorded. Expired leases themselves are found at claim time. Default 30000 ms.
   */
  stalledIntervalMs?: number;
  /**
   * A task a claim took from the claim order for BullMQ that BullMQ still lacks after this long
   * is handed over again at a later claim: the first try was cut short by a crash or an outage.
   * Default 10000 ms.
   */
  handOverGraceMs?: number;
  /** Gets background errors (connection lost, reconnect failed), password removed. Default: dropped. */
  onError?: (err: Error) => void;
  /** The clock a task's slot time is measured on for the fair share (epoch ms). Default Date.now. */
  now?: () => number;
}
