// The job window's row of one job (app.js): its preview, name, status with the reason of a failure,
// progress, outputs, and its buttons (Cancel, Frames, Estimate, and scheduling.js's controls). Rows
// are made once per job and updated in place, on `window.rbJobRow`.
// Text goes through textContent only, never innerHTML.
'use strict';

(function () {
  const TERMINAL = new Set(['completed', 'failed', 'canceled']);
  const rows = new Map();
  /** What app.js gives: make(tag, className) and cancelJob(id, button). */
  let deps;

  function jobName(job) {
    return (job.sceneFile && job.sceneFile.name) || `job ${job.id.slice(0, 8)}`;
  }

  function reason(job) {
    const r = job.failedReason;
    if (!r) return '';
    const m = r.errorDetails && r.errorDetails.message;
    return typeof m === 'string' && m ? `${r.name}: ${m}` : r.name;
  }

  function rowFor(id) {
    let row = rows.get(id);
    if (row) return row;
    const tr = deps.make('tr');
    tr.dataset.jobId = id;
    const preview = deps.make('td', 'preview');
    const img = deps.make('img', 'preview');
    img.alt = 'preview';
    img.hidden = true;
    // Shown once it loads: a preview announced before it is written would show as a broken image.
    img.addEventListener('load', () => (img.hidden = false));
    img.addEventListener('error', () => (img.hidden = true));
    preview.append(img);
    const name = deps.make('td');
    const title = deps.make('div', 'job-name');
    const sub = deps.make('div', 'job-id');
    name.append(title, sub);
    const statusCell = deps.make('td');
    const status = deps.make('span', 'status');
    const why = deps.make('div', 'reason');
    statusCell.append(status, why);
    const progressCell = deps.make('td');
    const bar = deps.make('progress');
    bar.max = 100;
    const ptext = deps.make('div', 'progress-text');
    progressCell.append(bar, ptext);
    const outputs = deps.make('td', 'outputs');
    const actions = deps.make('td');
    const cancel = deps.make('button', 'cancel');
    cancel.type = 'button';
    cancel.textContent = 'Cancel';
    cancel.addEventListener('click', () => void deps.cancelJob(id, cancel));
    const frames = deps.make('button', 'frames');
    frames.type = 'button';
    frames.textContent = 'Frames';
    frames.setAttribute('aria-expanded', 'false');
    frames.addEventListener('click', () => window.rbFrames.toggle(id, frames));
    const estimate = deps.make('button', 'estimate');
    estimate.type = 'button';
    estimate.textContent = 'Estimate';
    estimate.hidden = true;
    estimate.addEventListener('click', () => void window.rbEstimate.start(id));
    actions.append(cancel, frames, estimate, window.rbScheduling.controls(id));
    tr.append(preview, name, statusCell, progressCell, outputs, actions);
    row = { tr, img, title, sub, status, why, bar, ptext, outputs, cancel, estimate };
    rows.set(id, row);
    return row;
  }

  function update(t) {
    const { job, progress, download } = t;
    const r = rowFor(job.id);
    r.title.textContent = jobName(job);
    r.sub.textContent = job.id;
    r.status.textContent = job.status;
    r.status.dataset.status = job.status;
    r.why.textContent = job.status === 'failed' ? reason(job) : '';
    if (job.previewUrl && r.img.getAttribute('src') !== job.previewUrl) r.img.src = job.previewUrl;
    let percent = progress && progress.percent != null ? progress.percent : null;
    if (job.status === 'completed') percent = 100;
    if (percent == null) r.bar.removeAttribute('value');
    else r.bar.value = percent;
    const frames = progress && progress.framesTotal ? `${progress.framesDone ?? 0}/${progress.framesTotal} frames` : '';
    r.ptext.textContent = [percent != null ? `${Math.round(percent)}%` : '', frames].filter(Boolean).join(' · ');
    r.outputs.textContent = download
      ? `${download.outDir} (${download.state}, ${download.filesDone}/${download.files} files)`
      : TERMINAL.has(job.status)
        ? ''
        : '—';
    r.cancel.hidden = TERMINAL.has(job.status);
    r.estimate.hidden = !window.rbEstimate.canEstimate(job);
    window.rbScheduling.update(job);
  }

  window.rbJobRow = {
    init(d) {
      deps = d;
    },
    rowFor,
    update,
  };
})();
