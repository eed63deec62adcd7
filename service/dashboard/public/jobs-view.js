// The jobs list: one row per job, newest first, kept up to date by the live feed. Text is only
// ever set through textContent, never parsed as HTML.
import { jobName, percentOf, progressText, statusText, when } from './format.js';

const $ = (id) => document.getElementById(id);
const rows = new Map();

function make(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function rowFor(id) {
  let row = rows.get(id);
  if (row) return row;
  const tr = make('tr');
  tr.dataset.jobId = id;
  const nameCell = make('td');
  const link = make('a', 'job-name');
  link.href = `#/jobs/${encodeURIComponent(id)}`;
  nameCell.append(link, make('div', 'job-id', id));
  const statusCell = make('td');
  const status = make('span', 'status');
  statusCell.append(status);
  const progressCell = make('td');
  const bar = make('progress');
  bar.max = 100;
  const ptext = make('div', 'progress-text muted');
  progressCell.append(bar, ptext);
  const created = make('td', 'created');
  const updated = make('td', 'updated');
  tr.append(nameCell, statusCell, progressCell, created, updated);
  row = { tr, link, status, bar, ptext, created, updated, createdAt: '' };
  rows.set(id, row);
  return row;
}

/** Shows one job (from the stream, a poll or a page load) in its row, placed by creation time. */
export function showJobRow({ job, progress }) {
  const row = rowFor(job.id);
  row.link.textContent = jobName(job);
  row.status.textContent = statusText(job.status);
  row.status.dataset.status = job.status;
  const pct = percentOf(job, progress);
  if (pct === null) row.bar.removeAttribute('value');
  else row.bar.value = pct;
  row.bar.setAttribute('aria-label', `Progress of ${jobName(job)}`);
  row.ptext.textContent = progressText(job, progress);
  row.created.textContent = when(job.createdAt);
  row.updated.textContent = when(job.updatedAt);
  row.createdAt = job.createdAt;
  const body = $('jobs-table').tBodies[0];
  if (row.tr.parentNode !== body) {
    // Newest first: before the first row created earlier than this one.
    const after = [...rows.values()].find((r) => r !== row && r.tr.parentNode === body && r.createdAt < job.createdAt);
    body.insertBefore(row.tr, after ? after.tr : null);
  }
  $('jobs-empty').hidden = rows.size > 0;
}

export function clearJobRows() {
  for (const r of rows.values()) r.tr.remove();
  rows.clear();
}
