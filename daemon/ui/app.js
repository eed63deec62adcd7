// The job window: lists the daemon's jobs (a row each, job-row.js) and follows them live (events.js),
// with the packs and uploads in progress above them (sending.js, lines from transfer.js), a validated
// job's Estimate (estimate.js), an unfinished job's priority, pause and resume (scheduling.js), and a
// job's frame thumbnails under its row with a flip-book of them (frames.js, flipbook.js). The token
// comes from the URL fragment (#token=..., which browsers never send to the server) and goes in the
// Authorization header of every call.
// Text goes through textContent only, never innerHTML.
'use strict';

const token = new URLSearchParams(location.hash.slice(1)).get('token');
/** @type {Map<string, {job: any, progress: any, download: any}>} */
const jobs = new Map();
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

/** A plain button (type=button, so it never submits a form) that calls onClick. */
function button(className, text, onClick) {
  const b = make('button', className);
  b.type = 'button';
  b.textContent = text;
  b.addEventListener('click', onClick);
  return b;
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

function render() {
  const body = document.querySelector('#jobs tbody');
  const sorted = [...jobs.values()].sort((a, b) => b.job.createdAt.localeCompare(a.job.createdAt));
  for (const t of sorted) window.rbJobRow.update(t);
  body.replaceChildren(
    ...sorted.flatMap((t) => [
      window.rbJobRow.rowFor(t.job.id).tr,
      ...window.rbEstimate.rowsFor(t.job.id),
      ...window.rbFrames.rowsFor(t.job.id),
    ]),
  );
  $('empty').hidden = sorted.length > 0;
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
  if (name === 'pack' || name === 'submission') return window.rbSending.onTransfer(name, data);
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
  window.rbSending.clearSubmissions();
  for (const s of submissions) window.rbSending.onTransfer('submission', s);
  // Oldest first, so a job's latest estimate is the one shown.
  for (const s of [...submissions].reverse()) window.rbEstimate.onSubmission(s);
  render();
  window.rbSending.render();
}

async function main() {
  window.rbJobRow.init({ make, cancelJob });
  window.rbSending.init({ make, $ });
  window.rbEstimate.init({ api, make, button, detailRow, rerender: render });
  window.rbFrames.init({ api, make, detailRow, token, showMessage, rerender: render });
  window.rbScheduling.init({ api, make, button, showMessage });
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
      await window.rbEvents.follow(token, onEvent, () => setConnection('live', 'live'));
    } catch (err) {
      showMessage(`The daemon cannot be reached: ${err.message}`);
    }
    setConnection('offline', 'reconnecting…');
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

void main();
