// The job window's progress lines for packs and uploads, the same wording as the tray and the CLI
// (shared/daemon/transfer-text.ts; this page has no build step, so it is written again here):
// "Packing 120 MB / 500 MB · 80 MB/s · 5 s left", "Uploading … (340 MB already on the farm)".
// Pure functions on the daemon's PackState and Submission bodies, on `window.rbTransfer`.
'use strict';

(function () {
  const SEP = ' · ';

  function formatBytes(bytes) {
    let n = Math.max(0, Math.floor(bytes || 0));
    if (n < 1000) return `${n} B`;
    for (const unit of ['kB', 'MB', 'GB', 'TB']) {
      n /= 1000;
      if (n < 999.95 || unit === 'TB') return `${n < 10 ? n.toFixed(1) : n.toFixed(0)} ${unit}`;
    }
    return `${n.toFixed(0)} TB`;
  }

  function formatSeconds(seconds) {
    const s = Math.max(0, Math.round(seconds));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const pad = (v) => String(v).padStart(2, '0');
    if (h > 0) return `${h} h ${pad(m)} min`;
    return m > 0 ? `${m} min ${pad(s % 60)} s` : `${s} s`;
  }

  function transferLine(verb, t) {
    const done = (t && t.bytesDone) || 0;
    const total = (t && t.bytesTotal) || 0;
    const parts = [total > 0 ? `${verb} ${formatBytes(done)} / ${formatBytes(total)}` : `${verb}…`];
    if (t && done < total) {
      if (t.bytesPerSecond > 0) parts.push(`${formatBytes(t.bytesPerSecond)}/s`);
      if (t.etaSeconds !== null && t.etaSeconds !== undefined) parts.push(`${formatSeconds(t.etaSeconds)} left`);
    }
    return parts.join(SEP);
  }

  function packLine(state) {
    if (state.state === 'ready')
      return (
        `Packed ${(state.result && state.result.fileCount) || 0} ` +
        `file(s), ${formatBytes(state.result && state.result.bytes)}`
      );
    if (state.state === 'failed')
      return `Packing failed: ${(state.error && state.error.message) || 'see the daemon log'}`;
    if (state.phase === 'tracing') return 'Finding the files the scene uses (Blender)…';
    if (state.phase === 'zipping') return transferLine('Zipping', state.progress);
    if (state.phase === 'hashing') return transferLine('Packing', state.progress);
    return 'Packing…';
  }

  function uploadLine(upload) {
    let line = transferLine('Uploading', upload);
    if (upload.bytesSkipped > 0) line += ` (${formatBytes(upload.bytesSkipped)} already on the farm)`;
    if (upload.retries > 0) line += `, ${upload.retries} ${upload.retries === 1 ? 'retry' : 'retries'}`;
    return line;
  }

  function submissionLine(s) {
    if (s.step === 'packing') return s.pack ? transferLine('Packing', s.pack) : null;
    if (s.step !== 'uploading') return null;
    if (s.upload) return uploadLine(s.upload);
    if (s.pack && s.pack.bytesDone < s.pack.bytesTotal) return transferLine('Zipping', s.pack);
    return s.totalBytes > 0
      ? transferLine('Uploading', {
          bytesDone: s.uploadedBytes,
          bytesTotal: s.totalBytes,
          bytesPerSecond: 0,
          etaSeconds: null,
        })
      : null;
  }

  window.rbTransfer = { formatBytes, formatSeconds, transferLine, packLine, uploadLine, submissionLine };
})();
