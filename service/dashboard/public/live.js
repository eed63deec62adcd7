// Live job status: the service's event stream (GET /events, Server-Sent Events), and polling
// GET /jobs + GET /jobs/progress while the stream cannot be used (a proxy that buffers or blocks
// it, a dropped connection). The stream is tried again every so often; polling stops once it is back.
import { API, api } from './api.js';

const POLL_MS = 3000;
const RETRY_STREAM_MS = 20000;

/**
 * Calls onJob({job, progress}) for every job seen, onState('live' | 'polling' | 'connecting'),
 * onSessionEnded() when the server ends the session. Returns stop().
 */
export function startLive({ onJob, onState, onSessionEnded, onError }) {
  let source = null;
  let pollTimer = null;
  let retryTimer = null;
  let stopped = false;

  const poll = async () => {
    try {
      const [list, progress] = await Promise.all([api('GET', '/jobs?pageSize=50'), api('GET', '/jobs/progress')]);
      const byId = new Map(progress.data.map((p) => [p.jobId, p]));
      for (const job of list.jobs) onJob({ job, progress: byId.get(job.id) || null });
    } catch (err) {
      onError(err);
    }
  };
  const startPolling = () => {
    if (pollTimer || stopped) return;
    onState('polling');
    void poll();
    pollTimer = setInterval(poll, POLL_MS);
  };
  const stopPolling = () => {
    clearInterval(pollTimer);
    pollTimer = null;
  };
  const open = () => {
    if (stopped) return;
    clearTimeout(retryTimer);
    source = new EventSource(`${API}/events`);
    source.addEventListener('open', () => {
      stopPolling();
      onState('live');
    });
    source.addEventListener('job', (e) => onJob(JSON.parse(e.data)));
    source.addEventListener('session-ended', () => {
      stop();
      onSessionEnded();
    });
    source.addEventListener('error', () => {
      // The browser reconnects by itself after a dropped stream (CONNECTING), but not after a
      // refusal (CLOSED): poll meanwhile either way, and try the stream again later.
      startPolling();
      if (source.readyState === EventSource.CLOSED) retryTimer = setTimeout(open, RETRY_STREAM_MS);
    });
  };
  const stop = () => {
    stopped = true;
    stopPolling();
    clearTimeout(retryTimer);
    if (source) source.close();
  };
  onState('connecting');
  if (typeof EventSource === 'function') open();
  else startPolling();
  return stop;
}
