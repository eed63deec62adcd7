// The scheduling part of a job's page (extension scheduling): its priority with a field to change
// it, Pause / Resume, "Approve previews" while the approval gate holds the other frames, and what
// the job waits for (links to the jobs it depends on), and the queue ahead of it (queue-ahead-view.js).
// Shown for unfinished jobs only.
import { jobLink, postAction } from './job-action.js';
import { showQueueAhead } from './queue-ahead-view.js';

const $ = (id) => document.getElementById(id);
const TERMINAL = new Set(['completed', 'failed', 'canceled']);
/** The job the controls act on, as last shown. */
let current = null;
let reportError = () => {};

function schedulingOf(job) {
  return job.scheduling ?? { priority: 50, paused: false, dependsOn: [], waitingFor: [], previews: null };
}

/** Shows the controls for `job`; called whenever the job page changes. */
export function showScheduling(job, onError) {
  const fresh = !current || current.id !== job.id;
  current = job;
  reportError = onError;
  const box = $('job-scheduling');
  box.hidden = TERMINAL.has(job.status);
  if (box.hidden) return;
  showQueueAhead(job, onError);
  const s = schedulingOf(job);
  if (fresh) {
    $('scheduling-error').hidden = true;
    $('priority-input').value = String(s.priority);
  }
  const parts = [`Priority ${s.priority}`];
  if (s.paused) parts.push('paused: no new frame starts');
  if (s.previews && s.previews.frames.length) {
    const gate = s.previews.gate === 'waiting' ? ' (the others wait for approval)' : '';
    parts.push(`previews: frames ${s.previews.frames.join(', ')}${gate}`);
  }
  const line = $('scheduling-line');
  line.replaceChildren(parts.join(' · '));
  if (s.waitingFor.length) {
    line.append(' · waiting for ');
    s.waitingFor.forEach((id, i) => line.append(...(i ? [', '] : []), jobLink(id)));
  }
  $('job-pause').hidden = s.paused;
  $('job-resume').hidden = !s.paused;
  $('job-approve').hidden = !(s.previews && s.previews.gate === 'waiting');
}

async function act(path, body, button) {
  if (!current) return;
  const errorBox = $('scheduling-error');
  const answer = await postAction(`/jobs/${encodeURIComponent(current.id)}/${path}`, body, {
    button,
    errorBox,
    onError: reportError,
  });
  if (!answer) return;
  showScheduling(answer.data, reportError);
  $('priority-input').value = String(schedulingOf(answer.data).priority);
}

$('priority-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void act('priority', { priority: Number($('priority-input').value) }, $('priority-submit'));
});
$('job-pause').addEventListener('click', () => void act('pause', undefined, $('job-pause')));
$('job-resume').addEventListener('click', () => void act('resume', undefined, $('job-resume')));
$('job-approve').addEventListener('click', () => void act('approve-previews', undefined, $('job-approve')));
