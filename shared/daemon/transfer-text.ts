// The progress lines of a pack and an upload, from the daemon's Transfer objects: what the CLI and
// the tray show (the add-on has the same wording in host-addon/renderbridge/transfer_text.py, the
// job window in daemon/ui/transfer.js). Pure: "Packing 120 MB / 500 MB · 80 MB/s · 5 s left".
import type { PackState, Submission, Transfer } from './submission-schemas.js';

const SEP = ' · ';

/** Decimal units, as file managers and network speeds count: `999 B`, `1.5 MB`, `120 MB`, `2.1 GB`. */
export function formatBytesDecimal(bytes: number): string {
  let n = Math.max(0, Math.floor(bytes || 0));
  if (n < 1000) return `${n} B`;
  for (const unit of ['kB', 'MB', 'GB', 'TB']) {
    n /= 1000;
    if (n < 999.95 || unit === 'TB') return `${n < 10 ? n.toFixed(1) : n.toFixed(0)} ${unit}`;
  }
  return `${n.toFixed(0)} TB`;
}

/** `5 s`, `1 min 05 s`, `1 h 02 min`. */
export function formatSeconds(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (v: number) => String(v).padStart(2, '0');
  if (h > 0) return `${h} h ${pad(m)} min`;
  return m > 0 ? `${m} min ${pad(s % 60)} s` : `${s} s`;
}

/** `Verb done / total · rate · time left`; the rate and the time only once known and while not done. */
export function transferLine(verb: string, t: Transfer | null | undefined): string {
  const done = t?.bytesDone ?? 0;
  const total = t?.bytesTotal ?? 0;
  const parts = [total > 0 ? `${verb} ${formatBytesDecimal(done)} / ${formatBytesDecimal(total)}` : `${verb}…`];
  if (t && done < total) {
    if (t.bytesPerSecond > 0) parts.push(`${formatBytesDecimal(t.bytesPerSecond)}/s`);
    if (t.etaSeconds !== null) parts.push(`${formatSeconds(t.etaSeconds)} left`);
  }
  return parts.join(SEP);
}

/** What a background pack is doing, or how it ended. */
export function packLine(state: PackState): string {
  if (state.state === 'ready')
    return `Packed ${state.result?.fileCount ?? 0} file(s), ${formatBytesDecimal(state.result?.bytes ?? 0)}`;
  if (state.state === 'failed') return `Packing failed: ${state.error?.message ?? 'see the daemon log'}`;
  if (state.phase === 'tracing') return 'Finding the files the scene uses (Blender)…';
  if (state.phase === 'zipping') return transferLine('Zipping', state.progress);
  if (state.phase === 'hashing') return transferLine('Packing', state.progress);
  return 'Packing…';
}

/** An upload: the bytes to send, what the farm already held, and the retries. */
export function uploadLine(upload: NonNullable<Submission['upload']>): string {
  let line = transferLine('Uploading', upload);
  if (upload.bytesSkipped > 0) line += ` (${formatBytesDecimal(upload.bytesSkipped)} already on the farm)`;
  if (upload.retries > 0) line += `, ${upload.retries} ${upload.retries === 1 ? 'retry' : 'retries'}`;
  return line;
}

/** A submission's transfer line while it packs or uploads; null at any other step. */
export function submissionLine(s: Submission): string | null {
  if (s.step === 'packing') return s.pack ? transferLine('Packing', s.pack) : null;
  if (s.step !== 'uploading') return null;
  if (s.upload) return uploadLine(s.upload);
  // Before a single PUT the packer writes the zip, reported as the submission's `pack`.
  if (s.pack && s.pack.bytesDone < s.pack.bytesTotal) return transferLine('Zipping', s.pack);
  // A submission without an upload Transfer (yet): its byte counters still make a line.
  return s.totalBytes > 0
    ? transferLine('Uploading', {
        bytesDone: s.uploadedBytes,
        bytesTotal: s.totalBytes,
        bytesPerSecond: 0,
        etaSeconds: null,
      })
    : null;
}
