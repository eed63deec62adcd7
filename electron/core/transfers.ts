// The packs and submissions the daemon is sending (the `pack` and `submission` events), as the
// tray's menu and tooltip show them: "scene.blend — Uploading 40 MB / 160 MB · 20 MB/s · 6 s left
// (340 MB already on the farm)". Only what is moving is kept: a pack leaves once ready or failed,
// a submission once past its upload, so the state stays small however long the tray runs. Pure.
import path from 'node:path';
import type { DaemonEvent } from '../../shared/daemon/api.js';
import type { PackState, Submission } from '../../shared/daemon/submission-schemas.js';
import { packLine, submissionLine } from '../../shared/daemon/transfer-text.js';

export interface Transfers {
  packs: Readonly<Record<string, PackState>>;
  submissions: Readonly<Record<string, Submission>>;
}

export const NO_TRANSFERS: Transfers = { packs: {}, submissions: {} };

export interface TransferRow {
  id: string;
  /** The project's file or folder name; '' for a pack (its events do not name the project). */
  name: string;
  /** What it does now, with bytes, rate and time left. */
  line: string;
}

const MOVING_STEPS: ReadonlySet<Submission['step']> = new Set(['packing', 'uploading']);

function without<T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> {
  const { [key]: _gone, ...rest } = record;
  return rest;
}

/** The transfers after a `pack` or `submission` event (others leave them as they are). */
export function applyTransferEvent(t: Transfers, e: DaemonEvent): Transfers {
  if (e.event === 'pack') {
    const s = e.data;
    return { ...t, packs: s.state === 'packing' ? { ...t.packs, [s.packId]: s } : without(t.packs, s.packId) };
  }
  if (e.event === 'submission') {
    const s = e.data;
    return {
      ...t,
      submissions: MOVING_STEPS.has(s.step) ? { ...t.submissions, [s.id]: s } : without(t.submissions, s.id),
    };
  }
  return t;
}

/**
 * The transfers from GET /submissions after a (re)connection; packs in progress are kept (they show
 * up again at their next event).
 */
export function transfersFromSubmissions(list: readonly Submission[], previous: Transfers = NO_TRANSFERS): Transfers {
  return {
    packs: previous.packs,
    submissions: Object.fromEntries(list.filter((s) => MOVING_STEPS.has(s.step)).map((s) => [s.id, s])),
  };
}

/** Every transfer with its line, oldest first (packs, then submissions). */
export function activeTransfers(t: Transfers): TransferRow[] {
  const packs = Object.values(t.packs)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((p) => ({ id: p.packId, name: '', line: packLine(p) }));
  const subs = Object.values(t.submissions)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((s) => ({
      id: s.id,
      name: s.path ? path.basename(s.path) : '',
      line: submissionLine(s) ?? (s.step === 'packing' ? 'Packing…' : 'Uploading…'),
    }));
  return [...packs, ...subs];
}

/** `scene.blend — Uploading …`, or the line alone for an unnamed pack. */
export function transferLabel(row: TransferRow): string {
  return row.name ? `${row.name} — ${row.line}` : row.line;
}
