// The task log panel of the job page (extension task-logs): each row of the tasks table gets a
// "Log" button; the panel shows one attempt's log, following it live while it runs (a streamed
// GET /jobs/{id}/logs?follow=true read as it arrives), with a search box that highlights matching
// lines, can hide the others, and jumps between matches. Text goes in through textContent only.
import { API, ApiFailure, api } from './api.js';

const $ = (id) => document.getElementById(id);
/** Lines kept in the page; older ones are dropped from the top (the API serves the whole log). */
const MAX_LINES = 50000;

let current = null;

function make(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The panel, made once below the tasks table. */
function panel() {
  let section = $('log-section');
  if (section) return section;
  section = make('section');
  section.id = 'log-section';
  section.hidden = true;
  section.setAttribute('aria-labelledby', 'log-h');
  const head = make('div', 'log-head');
  const h = make('h2', '', 'Task log');
  h.id = 'log-h';
  const attempt = make('select');
  attempt.id = 'log-attempt';
  attempt.setAttribute('aria-label', 'Attempt');
  const state = make('span', 'muted');
  state.id = 'log-state';
  const close = make('button', 'secondary', 'Close');
  close.id = 'log-close';
  close.type = 'button';
  head.append(h, attempt, state, close);
  const tools = make('div', 'log-tools');
  const search = make('input');
  search.id = 'log-search';
  search.type = 'search';
  search.placeholder = 'Search the log';
  search.setAttribute('aria-label', 'Search the log');
  const prev = make('button', 'secondary', 'Previous');
  prev.id = 'log-prev';
  prev.type = 'button';
  const next = make('button', 'secondary', 'Next');
  next.id = 'log-next';
  next.type = 'button';
  const onlyLabel = make('label', 'log-only');
  const only = make('input');
  only.id = 'log-only';
  only.type = 'checkbox';
  onlyLabel.append(only, document.createTextNode(' matching lines only'));
  const count = make('span', 'muted');
  count.id = 'log-count';
  count.setAttribute('aria-live', 'polite');
  tools.append(search, prev, next, onlyLabel, count);
  const pre = make('pre', 'log-text');
  pre.id = 'log-text';
  pre.tabIndex = 0;
  section.append(head, tools, pre);
  $('tasks-table').closest('section').after(section);
  close.addEventListener('click', () => closeLog());
  attempt.addEventListener(
    'change',
    () => current && showAttempt(current.jobId, current.taskId, Number(attempt.value)),
  );
  search.addEventListener('input', () => applySearch(true));
  only.addEventListener('change', () => applySearch(false));
  prev.addEventListener('click', () => jump(-1));
  next.addEventListener('click', () => jump(1));
  search.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') jump(e.shiftKey ? -1 : 1);
  });
  return section;
}

/** Adds a "Log" button to each row of the tasks table (called after every refresh of the table). */
export function decorateTaskRows(tbody, jobId) {
  const headRow = tbody.parentElement.tHead && tbody.parentElement.tHead.rows[0];
  if (headRow && !headRow.querySelector('th.log')) {
    const th = make('th', 'log', 'Log');
    th.scope = 'col';
    headRow.append(th);
  }
  for (const tr of tbody.rows) {
    const td = make('td', 'log');
    const b = make('button', 'secondary', 'Log');
    b.type = 'button';
    b.dataset.logTask = tr.dataset.taskId;
    b.setAttribute('aria-label', `Log of task ${tr.dataset.taskId}`);
    b.addEventListener('click', () => openLog(jobId, tr.dataset.taskId).catch(showError));
    td.append(b);
    tr.append(td);
  }
}

function showError(err) {
  $('log-state').textContent = err instanceof ApiFailure ? err.message : `Could not read the log: ${err.message}`;
}

/** Opens the log of task `taskId`, at its latest attempt. */
export async function openLog(jobId, taskId) {
  const section = panel();
  stopStream();
  current = { jobId, taskId, attempt: null, controller: null, lines: [], partial: '', matches: [], at: -1 };
  section.hidden = false;
  $('log-h').textContent = `Task log · ${taskId}`;
  $('log-text').replaceChildren();
  $('log-state').textContent = 'Loading…';
  const { data } = await api('GET', `/jobs/${encodeURIComponent(jobId)}/logs/index?task=${encodeURIComponent(taskId)}`);
  const task = data.tasks.find((t) => t.id === taskId) || data.tasks[0];
  const attempts = task ? task.attempts : [];
  const select = $('log-attempt');
  const numbers = [...new Set(attempts.map((a) => a.attempt))];
  select.replaceChildren(...numbers.map((n) => make('option', '', `Attempt ${n}`)));
  numbers.forEach((n, i) => (select.options[i].value = String(n)));
  select.hidden = numbers.length < 2;
  if (numbers.length === 0) {
    $('log-state').textContent = 'This task has not started yet: its log opens here when it does.';
    // Asked again every 2 s while the panel still shows this task, so the log follows once it starts.
    const waiting = current;
    setTimeout(() => {
      if (current === waiting) openLog(jobId, taskId).catch(showError);
    }, 2000);
    return;
  }
  const last = numbers[numbers.length - 1];
  select.value = String(last);
  await showAttempt(jobId, taskId, last);
  section.scrollIntoView({ block: 'nearest' });
}

/** Streams one attempt's log into the panel; follows it while the job runs. */
async function showAttempt(jobId, taskId, attempt) {
  stopStream();
  const c = { jobId, taskId, attempt, controller: new AbortController(), lines: [], partial: '', matches: [], at: -1 };
  current = c;
  $('log-text').replaceChildren();
  $('log-state').textContent = 'Following…';
  const q = `task=${encodeURIComponent(taskId)}&attempt=${attempt}&follow=true`;
  const res = await fetch(`${API}/jobs/${encodeURIComponent(jobId)}/logs?${q}`, {
    credentials: 'same-origin',
    cache: 'no-store',
    signal: c.controller.signal,
  });
  if (!res.ok) throw new ApiFailure(res.status, await res.json().catch(() => null));
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (current !== c) return;
      append(c, value);
    }
    append(c, '\n');
    if (current === c) $('log-state').textContent = 'Complete';
  } catch (err) {
    if (c.controller.signal.aborted) return;
    throw err;
  }
}

function append(c, text) {
  const parts = (c.partial + text).split('\n');
  c.partial = parts.pop();
  const pre = $('log-text');
  const follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  const frag = document.createDocumentFragment();
  const query = $('log-search').value.trim().toLowerCase();
  for (const line of parts) {
    if (line === '' && c.lines.length === 0) continue;
    const el = make('div', 'log-line');
    el.dataset.text = line.toLowerCase();
    paint(el, line, query);
    c.lines.push(el);
    frag.append(el);
  }
  pre.append(frag);
  while (c.lines.length > MAX_LINES) c.lines.shift().remove();
  if (parts.length) {
    applySearch(false);
    $('log-state').textContent = `Following… ${c.lines.length} lines`;
  }
  if (follow) pre.scrollTop = pre.scrollHeight;
}

/** Writes a line's text, with each match of `query` in a <mark>. */
function paint(el, line, query) {
  if (!query) {
    el.textContent = line;
    return;
  }
  el.replaceChildren();
  const lower = line.toLowerCase();
  let i = 0;
  for (let j = lower.indexOf(query); j >= 0; j = lower.indexOf(query, i)) {
    if (j > i) el.append(document.createTextNode(line.slice(i, j)));
    el.append(make('mark', '', line.slice(j, j + query.length)));
    i = j + query.length;
  }
  if (i < line.length) el.append(document.createTextNode(line.slice(i)));
}

/** Marks the lines matching the search box; `repaint`: the query changed, so highlights are redone. */
function applySearch(repaint) {
  const c = current;
  if (!c) return;
  const query = $('log-search').value.trim().toLowerCase();
  const only = $('log-only').checked;
  const matches = [];
  for (const el of c.lines) {
    const hit = query !== '' && el.dataset.text.includes(query);
    if (repaint || (hit && !el.querySelector('mark'))) paint(el, el.textContent, hit ? query : '');
    el.classList.toggle('match', hit);
    el.hidden = only && query !== '' && !hit;
    if (hit) matches.push(el);
  }
  c.matches = matches;
  if (repaint) c.at = -1;
  $('log-count').textContent =
    query === '' ? '' : matches.length === 0 ? 'No matches' : `${Math.max(c.at + 1, 0)} / ${matches.length} matches`;
}

function jump(step) {
  const c = current;
  if (!c || c.matches.length === 0) return;
  c.matches[c.at]?.classList.remove('current');
  c.at = (c.at + step + c.matches.length) % c.matches.length;
  const el = c.matches[c.at];
  el.classList.add('current');
  el.scrollIntoView({ block: 'center' });
  $('log-count').textContent = `${c.at + 1} / ${c.matches.length} matches`;
}

function stopStream() {
  if (current && current.controller) current.controller.abort();
}

/** Closes the panel and stops following (the job page closed, or the Close button). */
export function closeLog() {
  stopStream();
  current = null;
  const section = $('log-section');
  if (section) section.hidden = true;
}
