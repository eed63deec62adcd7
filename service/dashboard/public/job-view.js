// One job's page: status and progress, cancel, preview, warnings with what to do, the render
// settings used (finalConfig), the rendered frames (thumbs-view.js), output downloads and the tasks table. Room for
// later parts (task logs, requeue) is a section each below the tasks.
import { api } from './api.js';
import { closeLog, decorateTaskRows } from './log-view.js';
import { adviceFor, warningsOf } from './advice.js';
import { showRequeue } from './requeue.js';
import { showScheduling } from './scheduling.js';
import { closeFrames, hasEtaBand, refreshFrames } from './frames-view.js';
import { closeEstimate, onJobChanged, refreshEstimate } from './estimate-view.js';
import { closeThumbnails, refreshThumbnails, setFrameDownloads } from './thumbs-view.js';
import { TERMINAL, duration, frameList, jobName, percentOf, progressText, statusText, when } from './format.js';

const $ = (id) => document.getElementById(id);
let shown = null;
let tasksTimer = null;
let downloadsFor = null;

function make(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function failedText(job) {
  const r = job.failedReason;
  if (!r) return '';
  const m = r.errorDetails && typeof r.errorDetails.message === 'string' ? r.errorDetails.message : '';
  return m ? `${r.name}: ${m}` : r.name;
}

/** A finalConfig value in one line: lists and objects as compact JSON, long ones cut. */
function valueText(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v !== 'object') return String(v);
  const text = JSON.stringify(v);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function renderWarnings(job) {
  const list = $('warnings');
  const warnings = warningsOf(job);
  list.replaceChildren(
    ...warnings.map((w) => {
      const li = make('li', w.blocking ? 'blocking' : '');
      li.dataset.code = w.code;
      li.append(
        make('div', 'code', `${w.code}${w.blocking ? ' · stops the job' : ''}`),
        make('div', 'message', w.message),
        make('p', 'advice', adviceFor(w.code)),
      );
      return li;
    }),
  );
  $('warnings-none').hidden = warnings.length > 0;
}

/** The settings a person checks first, in this order; the rest follow under "All settings". */
const MAIN_SETTINGS = [
  'renderEngine',
  'computeDeviceType',
  'gpuCount',
  'sampleCount',
  'resolution',
  'resolutionPercentage',
  'frameRanges',
  'outputFormat',
  'fps',
  'videoOutput',
  'denoisingEnabled',
  'colorManagementPreset',
  'activeCamera',
  'sceneToRender',
  'hostVersionForRender',
  'minimumRam',
  'notes',
];

function settingRows(cfg, keys) {
  return keys.map((k) => {
    const tr = make('tr');
    const th = make('th', '', k);
    th.scope = 'row';
    tr.append(th, make('td', '', valueText(cfg[k])));
    return tr;
  });
}

function renderConfig(job) {
  const cfg = job.finalConfig;
  const keys = cfg ? Object.keys(cfg).filter((k) => k !== 'analysisWarnings') : [];
  const main = MAIN_SETTINGS.filter((k) => keys.includes(k));
  const rest = keys.filter((k) => !MAIN_SETTINGS.includes(k)).sort();
  $('config-table').tBodies[0].replaceChildren(...settingRows(cfg, main));
  $('config-all').tBodies[0].replaceChildren(...settingRows(cfg, rest));
  $('config-table').hidden = main.length === 0;
  $('config-more').hidden = rest.length === 0;
  $('config-none').hidden = keys.length > 0;
}

async function renderOutputs(job) {
  if (job.status !== 'completed' || downloadsFor === `${job.id}:${job.updatedAt}`) return;
  downloadsFor = `${job.id}:${job.updatedAt}`;
  const d = await api('GET', `/jobs/${encodeURIComponent(job.id)}/downloads`);
  const items = [];
  const link = (label, url) => {
    const li = make('li');
    const a = make('a', '', label);
    a.href = url;
    a.rel = 'noopener';
    li.append(a);
    return li;
  };
  const zips = (label, z) =>
    (Array.isArray(z) ? z : z ? [z] : []).map((url, i, all) =>
      link(all.length > 1 ? `${label}, part ${i + 1}` : label, url),
    );
  items.push(
    ...zips('All frames (zip)', d.transforms.framesZip),
    ...zips('All compositor outputs (zip)', d.transforms.compositeNodesZip),
  );
  for (const [view, videos] of Object.entries(d.transforms.video || {})) {
    for (const v of videos) if (v.url) items.push(link(`Video ${v.label || view || v.format}`.trim(), v.url));
  }
  // Every file, folded away: the frames are seen in the strip above, each linked to its file.
  const outputs = [...(d.frameOutputs || []), ...(d.compositeNodeOutputs || [])];
  const files = [];
  if (outputs.length) for (const o of outputs) files.push(link(o.relativePath || o.fileName, o.url));
  else
    for (const url of [...d.frames, ...d.compositeNodes])
      files.push(link(decodeURIComponent(new URL(url).pathname.split('/').pop() || 'file'), url));
  setFrameDownloads(d.frameOutputs);
  if (files.length) {
    const li = make('li', 'files');
    const details = make('details');
    details.append(make('summary', '', `Every file (${files.length})`), make('ul', 'outputs'));
    details.lastChild.replaceChildren(...files.slice(0, 500));
    li.append(details);
    items.push(li);
  }
  $('outputs').replaceChildren(...items);
  $('outputs-none').hidden = items.length > 0;
  if (items.length === 0)
    $('outputs-none').textContent = 'No outputs are available (they may have been deleted after the retention period).';
}

async function loadTasks() {
  if (!shown) return;
  const id = shown.job.id;
  const { data } = await api('GET', `/jobs/${encodeURIComponent(id)}/tasks`);
  if (!shown || shown.job.id !== id) return;
  // A job turns completed inside its finalize task, a moment before the task itself ends.
  shown.tasksOpen = data.some((t) => t.state !== 'done' && t.state !== 'failed' && t.state !== 'canceled');
  const body = $('tasks-table').tBodies[0];
  body.replaceChildren(
    ...data.map((t) => {
      const tr = make('tr');
      tr.dataset.taskId = t.id;
      tr.dataset.state = t.state;
      const kind =
        { validate: 'Check scene', render: 'Plan render', 'render-chunk': 'Render', finalize: 'Finish outputs' }[
          t.kind
        ] || t.kind;
      tr.append(
        make('td', '', kind),
        make('td', 'frames', frameList(t.frames)),
        make('td', 'state', t.state),
        make('td', 'worker', t.worker || ''),
        make('td', 'num', String(t.attempt)),
        make('td', 'num', duration(t.durationSeconds)),
        make('td', 'exit', t.exitReason || ''),
      );
      return tr;
    }),
  );
  decorateTaskRows(body, id);
  $('tasks-table').hidden = data.length === 0;
  $('tasks-none').hidden = data.length > 0;
}

/** Opens the page of job `id`; `onError` gets failures (401 ends the session in app.js). */
export async function openJob(id, onError) {
  closeJob();
  downloadsFor = null;
  const { data: job } = await api('GET', `/jobs/${encodeURIComponent(id)}`);
  let progress = null;
  if (!TERMINAL.has(job.status)) progress = (await api('GET', `/jobs/${encodeURIComponent(id)}/progress`)).data;
  shown = { job, progress };
  showJob({ job, progress }, onError);
  const tick = () => {
    loadTasks().catch(onError);
    refreshFrames(id).then(showProgressText).catch(onError);
    if (shown) refreshThumbnails(shown.job).catch(onError);
    if (shown) refreshEstimate(shown.job, onError).catch(onError);
  };
  tick();
  // Tasks are not in the event stream: refresh them while the job or one of its tasks is unfinished.
  tasksTimer = setInterval(() => {
    if (shown && (!TERMINAL.has(shown.job.status) || shown.tasksOpen)) tick();
  }, 2000);
}

export function closeJob() {
  clearInterval(tasksTimer);
  tasksTimer = null;
  shown = null;
  closeLog();
  closeFrames();
  closeThumbnails();
  closeEstimate();
}

export function shownJobId() {
  return shown ? shown.job.id : null;
}

/** Updates the page with a newer state of the shown job (from the live feed). */
export function showJob({ job, progress }, onError) {
  if (!shown || shown.job.id !== job.id) return;
  const finishedNow = TERMINAL.has(job.status) && !TERMINAL.has(shown.job.status);
  // A frame finished: its thumbnail (and the latest frame) may be there now.
  const framesMoved = Boolean(progress && (!shown.progress || progress.framesDone !== shown.progress.framesDone));
  shown = { job, progress: progress || (TERMINAL.has(job.status) ? null : shown.progress) };
  $('job-title').textContent = jobName(job);
  $('job-status').textContent = statusText(job.status);
  $('job-status').dataset.status = job.status;
  $('job-failed').textContent = failedText(job);
  $('job-failed').hidden = !job.failedReason;
  const pct = percentOf(job, shown.progress);
  if (pct === null) $('job-progress').removeAttribute('value');
  else $('job-progress').value = pct;
  showProgressText();
  const billed = job.normalizedSeconds > 0 ? ` · billed ${duration(job.normalizedSeconds)} (normalized)` : '';
  $('job-meta').textContent = `Created ${when(job.createdAt)} · updated ${when(job.updatedAt)}${billed} · ${job.id}`;
  $('job-cancel').disabled = TERMINAL.has(job.status);
  const img = $('job-preview');
  if (job.previewUrl) {
    // Shown once loaded: a preview announced before its file is written would be a broken image.
    if (img.dataset.src !== job.previewUrl.split('?')[0]) {
      img.dataset.src = job.previewUrl.split('?')[0];
      img.onload = () => ($('job-preview-box').hidden = false);
      img.onerror = () => ($('job-preview-box').hidden = true);
      img.src = job.previewUrl;
    }
  } else {
    $('job-preview-box').hidden = true;
    delete img.dataset.src;
  }
  showRequeue(job, onError);
  showScheduling(job, onError);
  refreshEstimate(job, onError).catch(onError);
  renderWarnings(job);
  renderConfig(job);
  renderOutputs(job).catch(onError);
  if (framesMoved || finishedNow) refreshThumbnails(job, finishedNow).catch(onError);
  if (finishedNow) {
    loadTasks().catch(onError);
    refreshFrames(job.id, true).catch(onError);
  }
}

/** The progress line; its own ETA is left out while the ETA with its band is shown below it. */
function showProgressText() {
  if (!shown) return;
  const p = shown.progress && hasEtaBand() ? { ...shown.progress, etaSeconds: null } : shown.progress;
  $('job-progress-text').textContent = progressText(shown.job, p);
}

// A render started from the estimate shows at once, before the live feed brings it.
onJobChanged((job, onError) => showJob({ job, progress: null }, onError));

export async function cancelShown() {
  if (!shown) return;
  const job = await api('POST', `/jobs/${encodeURIComponent(shown.job.id)}/cancel`);
  showJob({ job, progress: null });
}
