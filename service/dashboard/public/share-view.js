// The farm share page (#/share, extension scheduling): each workspace with frames waiting, paused or
// running, its weight, the share of the busy render slots its weight entitles it to against the
// share it holds now, and its frames waiting; the signed-in workspace first, with a row per
// submitter. Other workspaces are shown unnamed, as the service answers them. Polled every 2 s
// while shown; text is only ever set through textContent.
import { api } from './api.js';
import { duration } from './format.js';

const POLL_MS = 2000;
const $ = (id) => document.getElementById(id);
let timer = null;

function cell(text, className) {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

const pct = (x) => `${Math.round(x * 100)} %`;

/** The current share as a meter against the entitled one, so "behind" and "ahead" read at a glance. */
function shareCell(row) {
  const td = cell('');
  const meter = document.createElement('meter');
  meter.min = 0;
  meter.max = 1;
  meter.value = row.currentShare;
  meter.setAttribute('aria-label', 'Current share of the busy render slots');
  td.append(meter, ` ${pct(row.currentShare)}`);
  return td;
}

function rowOf(row, name, className) {
  const tr = document.createElement('tr');
  if (className) tr.className = className;
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = name;
  const spf = row.secondsPerFrame === null ? '–' : duration(row.secondsPerFrame);
  tr.append(
    th,
    cell(String(Math.round(row.weight * 100) / 100), 'num'),
    cell(pct(row.entitledShare), 'num'),
    shareCell(row),
    cell(String(row.runningSlots), 'num'),
    cell(String(row.waitingFrames), 'num'),
    cell(String(row.pausedFrames), 'num'),
    cell(spf, 'num'),
  );
  return tr;
}

function show(data) {
  const rows = [];
  let others = 0;
  for (const ws of data.workspaces) {
    if (ws.own) {
      rows.push(rowOf(ws, 'Your workspace', 'share-own'));
      // The key's label; a user with no key left by the start of their id.
      for (const s of ws.submitters) rows.push(rowOf(s, s.label ?? `User ${s.userId.slice(0, 8)}`, 'share-submitter'));
    } else rows.push(rowOf(ws, `Another workspace ${++others}`, 'share-other'));
  }
  $('share-table').tBodies[0].replaceChildren(...rows);
  $('share-empty').hidden = data.workspaces.length > 0;
  $('share-slots').textContent = `${data.busySlots} of ${data.liveSlots} live render slots busy`;
}

export function openShare(onError) {
  closeShare();
  const tick = async () => {
    try {
      const { data } = await api('GET', '/farm/share');
      if (timer !== null) show(data);
    } catch (err) {
      onError(err);
    }
    if (timer !== null) timer = setTimeout(tick, POLL_MS);
  };
  timer = setTimeout(tick, 0);
}

export function closeShare() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

/** Forgets what was shown (sign-out). */
export function clearShare() {
  closeShare();
  $('share-table').tBodies[0].replaceChildren();
}
