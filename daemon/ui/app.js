// The job window: lists the daemon's jobs and follows them live, with the packs and uploads in
// progress above them (lines from transfer.js), a validated job's Estimate (estimate.js), an unfinished
// job's priority, pause and resume (scheduling.js), and a job's frame thumbnails under its row with a
// flip-book of them (frames.js, flipbook.js). The token comes from the URL fragment (#token=..., which
// browsers never send to the server) and goes in the Authorization header of every call; the event
// stream is read with fetch (EventSource cannot set headers).
// Text goes through textContent only, never innerHTML.
'use strict';

const TERMINAL = new Set(['completed', 'failed', 'canceled']);
const token = new URLSearchParams(location.hash.slice(1)).get('token');
/** @type {Map<string, {job: any, progress: any, download: any}>} */
const jobs = new Map();
const rows = new Map();
/** Packs and submissions packing or uploading now, by `pack:<id>` / `submission:<id>`: {name, line}. */
const transfers = new Map();
const MOVING_STEPS = new Set(['packing', 'uploading']);
const $ = (id) => document.getElementById(id);

function setConnection(state, text) {
  const el = $('connection');
  el.dataset.state = state;
  el.textContent = text;
}

function showMessage(text) {
  const el = $('message');
  el.hidden = !text;
  el.textContent = text || '';
}

async function api(method, path, payload) {
  const headers = { authorization: `Bearer ${token}` };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const sent = payload === undefined ? undefined : JSON.stringify(payload);
  const res = await fetch(path, { method, headers, body: sent, cache: 'no-store' });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body && body.message ? body.message : `${method} ${path} answered ${res.status}`);
  return body;
}

function make(tag, className) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  return el;
}

/** Columns of the job table (index.html): a row under a job's row spans them all. */
const COLUMNS = 6;

/** A row under a job's row spanning the table (its estimate, its thumbnails), with its one cell. */
function detailRow(className, jobId) {
  const tr = make('tr', className);
  tr.dataset.jobId = jobId;
  const td = make('td');
  td.colSpan = COLUMNS;
  tr.append(td);
  return { tr, td };
}

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
  const tr = make('tr');
  tr.dataset.jobId = id;
  const preview = make('td', 'preview');
  const img = make('img', 'preview');
  img.alt = 'preview';
  img.hidden = true;
  // Shown once it loads: a preview announced before it is written would show as a broken image.
  img.addEventListener('load', () => (img.hidden = false));
  img.addEventListener('error', () => (img.hidden = true));
  preview.append(img);
  const name = make('td');
  const title = make('div', 'job-name');
  const sub = make('div', 'job-id');
  name.append(title, sub);
  const statusCell = make('td');
  const status = make('span', 'status');
  const why = make('div', 'reason');
  statusCell.append(status, why);
  const progressCell = make('td');
  const bar = make('progress');
  bar.max = 100;
  const ptext = make('div', 'progress-text');
  progressCell.append(bar, ptext);
  const outputs = make('td', 'outputs');
  const actions = make('td');
  const cancel = make('button', 'cancel');
  cancel.type = 'button';
  cancel.textContent = 'Cancel';
  cancel.addEventListener('click', () => void cancelJob(id, cancel));
  const frames = make('button', 'frames');
  frames.type = 'button';
  frames.textContent = 'Frames';
  frames.setAttribute('aria-expanded', 'false');
  frames.addEventListener('click', () => window.rbFrames.toggle(id, frames));
  const estimate = make('button', 'estimate');
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

function render() {
  const body = document.querySelector('#jobs tbody');
  const sorted = [...jobs.values()].sort((a, b) => b.job.createdAt.localeCompare(a.job.createdAt));
  for (const t of sorted) update(t);
  body.replaceChildren(
    ...sorted.flatMap((t) => [
      rowFor(t.job.id).tr,
      ...window.rbEstimate.rowsFor(t.job.id),
      ...window.rbFrames.rowsFor(t.job.id),
    ]),
  );
  $('empty').hidden = sorted.length > 0;
}

function renderTransfers() {
  const list = $('transfers');
  list.replaceChildren(
    ...[...transfers.entries()].map(([key, t]) => {
      const li = make('li');
      const [kind, id] = key.split(/:(.*)/s);
      li.dataset[kind === 'pack' ? 'packId' : 'submissionId'] = id;
      const name = make('span', 'transfer-name');
      name.textContent = t.name;
      const line = make('span', 'transfer-line');
      line.textContent = t.line;
      li.append(name, line);
      return li;
    }),
  );
  $('sending').hidden = transfers.size === 0;
}

function baseName(p) {
  return (
    String(p || '')
      .split(/[\\/]/)
      .filter(Boolean)
      .pop() || ''
  );
}

/** Keeps a pack or submission while it packs or uploads, drops it after. */
function onTransfer(name, data) {
  if (name === 'pack') {
    if (data.state === 'packing')
      transfers.set(`pack:${data.packId}`, { name: 'Project', line: window.rbTransfer.packLine(data) });
    else transfers.delete(`pack:${data.packId}`);
  } else if (MOVING_STEPS.has(data.step)) {
    const line = window.rbTransfer.submissionLine(data) || (data.step === 'packing' ? 'Packing…' : 'Uploading…');
    transfers.set(`submission:${data.id}`, { name: baseName(data.path), line });
  } else transfers.delete(`submission:${data.id}`);
  renderTransfers();
}

async function cancelJob(id, button) {
  button.disabled = true;
  button.textContent = 'Canceling…';
  try {
    const t = await api('POST', `/jobs/${encodeURIComponent(id)}/cancel`);
    jobs.set(id, t);
    showMessage('');
    render();
  } catch (err) {
    showMessage(`Cancel failed: ${err.message}`);
  } finally {
    button.disabled = false;
    button.textContent = 'Cancel';
  }
}

function onEvent(name, data) {
  if (name === 'submission') window.rbEstimate.onSubmission(data);
  if (name === 'pack' || name === 'submission') return onTransfer(name, data);
  const jobId = name === 'job' ? data.job.id : data.jobId;
  // A frame finished (or the job ended): its thumbnail may be there now.
  if (['job', 'progress', 'renderComplete'].includes(name)) window.rbFrames.refresh(jobId, name !== 'progress');
  if (name === 'job') jobs.set(data.job.id, data);
  else if (name === 'renderComplete')
    jobs.set(data.jobId, { ...(jobs.get(data.jobId) || { progress: null, download: null }), job: data.job });
  else if (name === 'progress' || name === 'download') {
    const known = jobs.get(data.jobId);
    if (!known) return;
    jobs.set(data.jobId, { ...known, [name]: data });
  } else return;
  render();
}

async function loadJobs() {
  const [{ jobs: list }, { submissions }] = await Promise.all([api('GET', '/jobs'), api('GET', '/submissions')]);
  jobs.clear();
  for (const t of list) jobs.set(t.job.id, t);
  for (const key of [...transfers.keys()]) if (key.startsWith('submission:')) transfers.delete(key);
  for (const s of submissions) onTransfer('submission', s);
  // Oldest first, so a job's latest estimate is the one shown.
  for (const s of [...submissions].reverse()) window.rbEstimate.onSubmission(s);
  render();
  renderTransfers();
}

async function readStream() {
  const res = await fetch('/events', {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    cache: 'no-store',
  });
  if (!res.ok || !res.body) throw new Error(`the event stream answered ${res.status}`);
  setConnection('live', 'live');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let at;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      let event;
      let data;
      for (const line of frame.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:'))
          data = (data === undefined ? '' : `${data}\n`) + line.slice(5).replace(/^ /, '');
      }
      if (event && data !== undefined) {
        try {
          onEvent(event, JSON.parse(data));
        } catch {
          // A frame that is not JSON is skipped.
        }
      }
    }
  }
}

async function main() {
  window.rbEstimate.init({ api, make, detailRow, rerender: render });
  window.rbFrames.init({ api, make, detailRow, token, showMessage, rerender: render });
  window.rbScheduling.init({ api, make, showMessage });
  if (!token) {
    setConnection('offline', 'no token');
    showMessage(
      'Open this page from the tray app, or add #token=<daemon token> to its address (renderbridge daemon ' +
        '--print-state shows where the state file with the token is).',
    );
    return;
  }
  for (;;) {
    try {
      await loadJobs();
      showMessage('');
      await readStream();
    } catch (err) {
      showMessage(`The daemon cannot be reached: ${err.message}`);
    }
    setConnection('offline', 'reconnecting…');
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

void main();
