// The job page's "queue ahead" line (extension scheduling): how many frames of how many other jobs
// are claimed before this job's next frame, and the expected wait. Other jobs' claims move it
// without any event of this job, so it is polled every 3 s while the page shows an unfinished job,
// and stops by itself once the page shows another view or job.
import { api, ApiFailure } from './api.js';
import { duration } from './format.js';

const POLL_MS = 3000;
const $ = (id) => document.getElementById(id);
let timer = null;
let jobId = null;
let reportError = () => {};

function words(q) {
  if (!q.waiting) return '';
  // 0 is "next in line", said by the words; null: not measured yet.
  const wait = q.expectedWaitSeconds ? ` · expected wait about ${duration(q.expectedWaitSeconds)}` : '';
  if (q.framesAhead === 0) return `Queue ahead: none, its next frame is first in line${wait}`;
  const jobs = q.jobsAhead === 1 ? '1 other job' : `${q.jobsAhead} other jobs`;
  const frames = q.framesAhead === 1 ? '1 frame' : `${q.framesAhead} frames`;
  return `Queue ahead: ${frames} of ${jobs}${wait}`;
}

function stop() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  jobId = null;
}

/** Whether the page still shows the job's scheduling box. */
function shown() {
  return !$('view-job').hidden && !$('job-scheduling').hidden;
}

async function tick() {
  const id = jobId;
  if (id === null || !shown()) return stop();
  try {
    const { data } = await api('GET', `/jobs/${encodeURIComponent(id)}/queue-ahead`);
    if (jobId !== id) return;
    const text = words(data);
    $('queue-ahead').textContent = text;
    $('queue-ahead').hidden = !text;
  } catch (err) {
    // A service without the route shows nothing; a session that ended is app.js's business.
    if (err instanceof ApiFailure && err.status === 401) reportError(err);
    if (err instanceof ApiFailure && err.status !== 401) $('queue-ahead').hidden = true;
  }
  if (jobId === id) timer = setTimeout(() => void tick(), POLL_MS);
}

/** Follows the queue ahead of `job` (called with each change of the job page's job). */
export function showQueueAhead(job, onError) {
  reportError = onError;
  if (jobId === job.id && timer !== null) return;
  stop();
  $('queue-ahead').hidden = true;
  jobId = job.id;
  timer = setTimeout(() => void tick(), 0);
}
