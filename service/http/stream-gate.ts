// Long-lived answers (GET /events, GET /jobs/{id}/logs?follow=true) hold a socket, timers and
// periodic reads for as long as they stay open, so their number is capped: per API key (one tenant
// cannot hold every place) and per process (all tenants together cannot exhaust it). Over either
// cap the request is a 429 TOO_MANY_STREAMS with Retry-After, before anything is read.
import { ApiError } from './api-error.js';

export interface StreamGateOptions {
  /** Streams one API key may hold open at once, on this process. */
  perKey: number;
  /** Streams this process holds open at once, all keys together. */
  perProcess: number;
  /** Seconds a refused client is told to wait (Retry-After). Default 5. */
  retryAfterSeconds?: number;
}

export class StreamGate {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly opts: StreamGateOptions) {}

  /** Open streams now, for metrics and tests. */
  get open(): number {
    return this.total;
  }

  /**
   * Takes a place for a stream of `keyId`; answers the function that gives it back (call it once,
   * when the stream ends however it ends; later calls do nothing). Throws TOO_MANY_STREAMS when full.
   */
  acquire(keyId: string): () => void {
    const mine = this.byKey.get(keyId) ?? 0;
    const seconds = this.opts.retryAfterSeconds ?? 5;
    const refuse = (message: string, limit: number, scope: 'key' | 'process'): ApiError =>
      new ApiError('TOO_MANY_STREAMS', {
        message,
        metadata: { scope, limit, retryAfterSeconds: seconds },
        headers: { 'retry-after': String(seconds) },
      });
    if (mine >= this.opts.perKey) {
      throw refuse(
        `This API key already holds ${mine} open streams (log follows and event streams), the most one key ` +
          `may: close one (each dashboard tab or --follow holds one), then retry after ${seconds} s.`,
        this.opts.perKey,
        'key',
      );
    }
    if (this.total >= this.opts.perProcess) {
      throw refuse(
        `This service holds its most open streams (${this.opts.perProcess}): retry after ${seconds} s, or ` +
          `poll GET /jobs/{id} instead of following.`,
        this.opts.perProcess,
        'process',
      );
    }
    this.byKey.set(keyId, mine + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.byKey.get(keyId) ?? 1) - 1;
      if (left <= 0) this.byKey.delete(keyId);
      else this.byKey.set(keyId, left);
    };
  }
}
