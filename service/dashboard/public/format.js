// Words and numbers for people: statuses, durations, sizes, dates.

export const TERMINAL = new Set(['completed', 'failed', 'canceled']);

const STATUS_WORDS = {
  created: 'Created',
  validating: 'Checking the scene',
  validated: 'Ready to render',
  booting: 'Starting',
  rendering: 'Rendering',
  finalizing: 'Finishing outputs',
  debugging: 'Paused for debugging',
  suspended: 'Suspended',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
};

export function statusText(status) {
  return STATUS_WORDS[status] || status;
}

export function jobName(job) {
  return (job.sceneFile && job.sceneFile.name) || `Job ${job.id.slice(0, 8)}`;
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '';
  const s = Math.round(seconds);
  if (s < 60) return `${seconds < 10 ? seconds.toFixed(1) : s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

export function bytes(n) {
  if (!Number.isFinite(n)) return '';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Frames as ranges: [1,2,3,5] -> "1-3, 5". */
export function frameList(frames) {
  if (!frames || frames.length === 0) return '';
  const out = [];
  let start = frames[0];
  let prev = frames[0];
  for (const f of frames.slice(1).concat([NaN])) {
    if (f === prev + 1) {
      prev = f;
      continue;
    }
    out.push(start === prev ? `${start}` : `${start}-${prev}`);
    start = prev = f;
  }
  return out.join(', ');
}

/** "12 / 24 frames · 50 % · about 1 min 10 s left", from a progress document (or null). */
const BEFORE_RENDER = new Set(['created', 'validating', 'validated']);

export function progressText(job, progress) {
  if (job.status === 'completed') return 'Done';
  if (BEFORE_RENDER.has(job.status)) return 'Not rendering yet';
  if (!progress || progress.framesTotal === null) return TERMINAL.has(job.status) ? '' : 'Waiting for the first frame';
  const parts = [`${progress.framesDone ?? 0} / ${progress.framesTotal} frames`];
  if (progress.percent !== null) parts.push(`${Math.floor(progress.percent)} %`);
  if (progress.etaSeconds !== null && !TERMINAL.has(job.status))
    parts.push(`about ${duration(progress.etaSeconds)} left`);
  return parts.join(' · ');
}

export function percentOf(job, progress) {
  if (job.status === 'completed') return 100;
  if (BEFORE_RENDER.has(job.status)) return 0;
  return progress && progress.percent !== null ? progress.percent : null;
}
