// The workers page (#/workers, extension workers): every worker process with its slots (busy with
// which task of which job, loading a scene, or idle), GPUs, Blender builds, last heartbeat and the
// jobs whose blocklist keeps it off, and the queue's open tasks by kind. Polled every 2 s while
// shown; the page is rebuilt only when something other than the heartbeat's age changed, so focus
// and selection survive the polls. Text is only ever set through textContent.
import { api } from './api.js';
import { frameList, when } from './format.js';

const POLL_MS = 2000;
const $ = (id) => document.getElementById(id);
let timer = null;
let shownSignature = '';

const STATE_WORDS = { running: 'Running', lost: 'Lost (no heartbeat)', stopped: 'Stopped' };
const SLOT_WORDS = { idle: 'Idle', busy: 'Busy', loading: 'Loading a scene' };
const KIND_OF_BUILD = { release: 'release folder', root: 'system root, in bubblewrap' };
const KIND_WORDS = {
  validate: 'Validation',
  render: 'Render planning',
  'render-chunk': 'Render frames',
  finalize: 'Finalize',
};

function make(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function ago(seconds) {
  if (seconds < 1) return 'just now';
  if (seconds < 90) return `${Math.round(seconds)} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}

function jobLink(jobId, jobName) {
  const a = make('a', 'slot-job', jobName || `Job ${jobId.slice(0, 8)}`);
  a.href = `#/jobs/${encodeURIComponent(jobId)}`;
  return a;
}

function taskCell(slot) {
  const td = make('td', 'slot-task');
  if (slot.tasks.length === 0) {
    td.append(make('span', 'muted', slot.warmJobId ? 'Nothing (scene of a job kept loaded)' : '—'));
    return td;
  }
  slot.tasks.forEach((t, i) => {
    const line = make('div');
    line.append(make('span', null, `${i === 0 ? '' : 'Next: '}${KIND_WORDS[t.kind] || t.kind} `));
    if (t.jobId) line.append(jobLink(t.jobId, t.jobName));
    else line.append(make('span', 'muted', 'a job of another workspace'));
    if (t.frames && t.frames.length) line.append(make('span', 'muted', ` · frames ${frameList(t.frames)}`));
    td.append(line);
  });
  return td;
}

function slotTable(w) {
  const table = make('table', 'slots');
  const head = make('tr');
  for (const h of ['Slot', 'Device', 'Memory', 'State', 'Task']) {
    const th = make('th', null, h);
    th.scope = 'col';
    head.append(th);
  }
  table.createTHead().append(head);
  const body = table.createTBody();
  for (const s of w.slots) {
    const tr = make('tr');
    tr.dataset.slotId = s.id;
    tr.dataset.state = s.state;
    const state = make('td', 'slot-state', SLOT_WORDS[s.state] || s.state);
    state.dataset.state = s.state;
    const memory = make('td', 'slot-memory', s.memoryBytes === undefined ? '' : gib(s.memoryBytes));
    tr.append(make('td', 'job-id', s.id), make('td', null, s.device.name), memory, state, taskCell(s));
    body.append(tr);
  }
  return table;
}

/** Slot and machine memory, as people size them (`15.6 GiB`). */
function gib(bytes) {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

function listOf(label, items) {
  const p = make('p');
  p.append(make('span', 'label', `${label}:`), make('span', null, items.length ? items.join(', ') : 'none'));
  return p;
}

function workerCard(w) {
  const card = make('article', 'worker');
  card.dataset.workerId = w.id;
  card.dataset.state = w.state;
  const h = make('h2', null, w.name);
  const badge = make('span', 'worker-state', STATE_WORDS[w.state] || w.state);
  badge.dataset.state = w.state;
  h.append(' ', badge);
  const meta = make('p', 'muted');
  meta.append(
    `${w.hostname ? `${w.hostname} · ` : ''}renderbridge ${w.version} · started ${when(w.startedAt)} · last heartbeat `,
    make('span', 'heartbeat-age', ago(w.secondsSinceHeartbeat)),
  );
  card.append(h, meta, make('div', 'scroll'));
  card.lastChild.append(slotTable(w));
  card.append(
    listOf(
      'GPUs',
      w.gpus.map((g) => `${g.name} (${Math.round(g.memoryMiB / 1024)} GB)`),
    ),
    // Pools: a render that requires tags (scheduling.requiredTags) runs only where all of them are.
    listOf('Tags', w.tags || []),
    ...(w.memoryBytes !== undefined ? [listOf('Memory', [gib(w.memoryBytes)])] : []),
    ...(w.sandbox === false
      ? [make('p', 'warning', "Sandbox off (--no-sandbox): Blender runs with this worker's network and files.")]
      : []),
    listOf(
      'Blender',
      w.builds.map((b) => `${b.version}${b.kind && b.kind !== 'executable' ? ` (${KIND_OF_BUILD[b.kind]})` : ''}`),
    ),
  );
  const blocked = make('p', 'blocklisted');
  blocked.append(make('span', 'label', 'Kept off by the blocklist of:'));
  if (w.blocklistedBy.length === 0) blocked.append(make('span', null, 'no job'));
  w.blocklistedBy.forEach((b, i) => {
    if (i > 0) blocked.append(', ');
    blocked.append(
      jobLink(b.jobId, b.jobName),
      make('span', 'muted', ` (${b.failures} failed tasks on ${b.slots.join(', ')})`),
    );
  });
  card.append(blocked);
  return card;
}

function showQueue(queue) {
  const body = $('queue-table').tBodies[0];
  body.replaceChildren(
    ...queue.map((q) => {
      const tr = make('tr');
      tr.dataset.kind = q.kind;
      tr.append(
        make('td', null, KIND_WORDS[q.kind] || q.kind),
        make('td', 'num queued', String(q.queued)),
        make('td', 'num running', String(q.running)),
      );
      return tr;
    }),
  );
}

function show({ workers, queue }) {
  // Everything but the heartbeat's age: that alone changes every poll.
  const signature = JSON.stringify(
    workers.map(({ secondsSinceHeartbeat: _age, lastHeartbeatAt: _at, ...rest }) => rest),
  );
  if (signature !== shownSignature) {
    shownSignature = signature;
    $('workers-list').replaceChildren(...workers.map(workerCard));
  }
  for (const w of workers) {
    const el = document.querySelector(`article.worker[data-worker-id="${CSS.escape(w.id)}"] .heartbeat-age`);
    if (el) el.textContent = ago(w.secondsSinceHeartbeat);
  }
  $('workers-empty').hidden = workers.length > 0;
  showQueue(queue);
}

/** Shows the workers page and keeps it current until closeWorkers(). */
export function openWorkers(onError) {
  closeWorkers();
  const tick = async () => {
    try {
      const { data } = await api('GET', '/workers');
      if (timer !== null) show(data);
    } catch (err) {
      onError(err);
    }
    if (timer !== null) timer = setTimeout(tick, POLL_MS);
  };
  timer = setTimeout(tick, 0);
}

export function closeWorkers() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

/** Forgets what was shown (sign-out). */
export function clearWorkers() {
  closeWorkers();
  shownSignature = '';
  $('workers-list').replaceChildren();
  $('queue-table').tBodies[0].replaceChildren();
}
