// Packs made in the background (POST /packs): each runs the Packer while its state (phase, bytes,
// rate, ETA) is kept in memory and published as `pack` events, so no request stays open for the
// minutes a big project takes. A ready pack waits for its submission, then expires (its manifest
// and zip removed); a failed one keeps its error body readable for a while.
import { randomUUID } from 'node:crypto';
import { TransferRate } from '../../shared/client/transfer-rate.js';
import type { PackRequest, PackState } from '../../shared/daemon/submission-schemas.js';
import { DaemonError } from '../errors.js';
import type { BackgroundPacks, EventSink, Packer, PackPhase } from '../ports.js';

export interface BackgroundPacksDeps {
  packer: Packer;
  events: EventSink;
  /** How long a ready pack no submission took is kept before it is discarded, ms. Default 3600000 (1 h). */
  keepReadyMs?: number;
  /** How long a failed pack's state stays readable, ms. Default 600000 (10 min). */
  keepFailedMs?: number;
  /** Least time between two progress events of one pack, ms (phase changes and the end always go out). Default 250. */
  progressIntervalMs?: number;
  /** Clock of the rate estimate, for tests. Default `Date.now`. */
  now?: () => number;
}

interface Entry {
  state: PackState;
  abort: AbortController;
  running: Promise<void>;
  timer?: NodeJS.Timeout;
}

export function createBackgroundPacks(deps: BackgroundPacksDeps): BackgroundPacks {
  const entries = new Map<string, Entry>();
  let closed = false;
  const interval = deps.progressIntervalMs ?? 250;
  const now = deps.now ?? Date.now;

  const publish = (e: Entry, patch: Partial<PackState>): void => {
    e.state = { ...e.state, ...patch, updatedAt: new Date().toISOString() };
    deps.events.publish({ event: 'pack', data: e.state });
  };
  const expire = (packId: string, e: Entry, ms: number, discard: boolean): void => {
    if (closed) return;
    e.timer = setTimeout(() => {
      entries.delete(packId);
      if (discard) void deps.packer.discard(packId).catch(() => undefined);
    }, ms);
    // An expiry never keeps the process alive.
    e.timer.unref();
  };

  async function run(packId: string, e: Entry, req: PackRequest): Promise<void> {
    let phase: PackPhase | null = null;
    let rate = new TransferRate({ now });
    let last = 0;
    try {
      const result = await deps.packer.pack(req, {
        id: packId,
        signal: e.abort.signal,
        onProgress: (done, total, p) => {
          const changed = p !== phase;
          if (changed) rate = new TransferRate({ now });
          phase = p;
          const { bytesPerSecond, etaSeconds } = rate.update(done, total);
          const progress = {
            bytesDone: done,
            bytesTotal: total,
            bytesPerSecond,
            etaSeconds: total > 0 ? etaSeconds : null,
          };
          const t = now();
          if (!changed && done < total && t - last < interval) {
            e.state = { ...e.state, progress };
            return;
          }
          last = t;
          publish(e, { phase, progress });
        },
      });
      if (e.abort.signal.aborted) {
        // Stopped as it finished: nobody will submit it, so nothing of it is left behind.
        await deps.packer.discard(packId).catch(() => undefined);
        throw e.abort.signal.reason;
      }
      const total = e.state.progress.bytesTotal;
      publish(e, {
        state: 'ready',
        phase: null,
        result,
        progress: { ...e.state.progress, bytesDone: total, etaSeconds: total > 0 ? 0 : null },
      });
      expire(packId, e, deps.keepReadyMs ?? 3_600_000, true);
    } catch (err) {
      const error =
        err instanceof DaemonError
          ? err.toBody()
          : e.abort.signal.aborted
            ? new DaemonError('PACK_FAILED', 'The daemon stopped while packing; pack the project again.').toBody()
            : new DaemonError(
                'PACK_FAILED',
                `Packing failed unexpectedly (${err instanceof Error ? err.message : String(err)}); retry, ` +
                  `and report the daemon's log if it happens again.`,
              ).toBody();
      publish(e, { state: 'failed', error });
      expire(packId, e, deps.keepFailedMs ?? 600_000, false);
    }
  }

  return {
    start(req) {
      const packId = randomUUID();
      const at = new Date().toISOString();
      const entry: Entry = {
        state: {
          packId,
          state: 'packing',
          phase: null,
          progress: { bytesDone: 0, bytesTotal: 0, bytesPerSecond: 0, etaSeconds: null },
          result: null,
          error: null,
          createdAt: at,
          updatedAt: at,
        },
        abort: new AbortController(),
        running: Promise.resolve(),
      };
      entries.set(packId, entry);
      deps.events.publish({ event: 'pack', data: entry.state });
      entry.running = run(packId, entry, req);
      return { ...entry.state };
    },

    get(packId) {
      const e = entries.get(packId);
      if (!e) return undefined;
      // A submission that used the pack discarded it: nothing is left to submit.
      if (e.state.state === 'ready' && !deps.packer.get(packId)) {
        clearTimeout(e.timer);
        entries.delete(packId);
        return undefined;
      }
      return { ...e.state };
    },

    async close() {
      closed = true;
      for (const e of entries.values()) {
        clearTimeout(e.timer);
        e.abort.abort(new Error('the daemon is stopping'));
      }
      await Promise.all([...entries.values()].map((e) => e.running));
    },
  };
}
