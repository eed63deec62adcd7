// The requeue part of a job's page (extension job-requeue): "Requeue" on a failed or canceled
// job, "Re-render frames" with a frames field on a completed one (both then open the new job),
// and the links both ways: the job this one is a requeue of, and the jobs requeued from it.
import { api, ApiFailure } from './api.js';
import { jobLink, postAction } from './job-action.js';

const $ = (id) => document.getElementById(id);
/** The job the controls act on, as last shown. */
let current = null;
/** `id:status` whose lineage is on the page: it changes only when a job ends or is requeued. */
let lineageFor = null;
let reportError = () => {};

function lineageLine(className, words, link) {
  const p = document.createElement('p');
  p.className = className;
  p.append(`${words} `, jobLink(link.jobId), link.frames ? ` (frames ${link.frames.join(',')})` : '');
  return p;
}

async function loadLineage(job) {
  const key = `${job.id}:${job.status}`;
  if (lineageFor === key) return;
  lineageFor = key;
  const { data } = await api('GET', `/jobs/${encodeURIComponent(job.id)}/lineage`);
  if (!current || current.id !== data.jobId) return;
  const lines = [];
  if (data.requeuedFrom) lines.push(lineageLine('requeued-from', 'Requeue of', data.requeuedFrom));
  for (const r of data.requeues) lines.push(lineageLine('requeued-as', 'Requeued as', r));
  $('job-lineage').replaceChildren(...lines);
  $('job-lineage').hidden = lines.length === 0;
}

/** Shows the controls that fit the job's status and its links; called whenever the job page changes. */
export function showRequeue(job, onError) {
  if (!current || current.id !== job.id) {
    $('requeue-error').hidden = true;
    $('rerender-frames').value = '';
  }
  current = job;
  reportError = onError;
  $('job-requeue').hidden = job.status !== 'failed' && job.status !== 'canceled';
  $('job-rerender').hidden = job.status !== 'completed';
  loadLineage(job).catch((err) => {
    lineageFor = null;
    // A service without the extension has no lineage to show; a session that ended is app.js's business.
    if (err instanceof ApiFailure && err.status === 401) onError(err);
  });
}

async function requeue(body, button) {
  if (!current) return;
  const path = `/jobs/${encodeURIComponent(current.id)}/requeue`;
  const job = await postAction(path, body, { button, errorBox: $('requeue-error'), onError: reportError });
  if (job) location.hash = `#/jobs/${encodeURIComponent(job.id)}`;
}

$('job-requeue').addEventListener('click', () => void requeue({}, $('job-requeue')));
$('job-rerender').addEventListener('submit', (e) => {
  e.preventDefault();
  void requeue({ frames: $('rerender-frames').value.trim() }, $('rerender-submit'));
});
