// The job page's frame statistics (extension frame-stats): a chart of render time and peak memory
// per frame (uPlot, served by the service from its own node_modules), a summary line, and the ETA
// with its band while frames render. Read from GET /jobs/{id}/frames, a page of up to 1000 frames
// at a time; a long job shows its first MAX_POINTS frames.
import uPlot from './uPlot.esm.js';
import { api } from './api.js';
import { bytes, duration } from './format.js';

const $ = (id) => document.getElementById(id);
const PAGE = 1000;
/** Points the chart draws at most (a job of more frames shows the first ones; the summary counts all). */
const MAX_POINTS = 20_000;

let chart = null;
let chartFor = null;
/** Whether the ETA with its band is shown: the progress line then leaves out its own ETA. */
let etaShown = false;
/** When the frames were last read, and in how many pages: a long job is read less often (2 s a page). */
let lastRead = 0;
let pagesRead = 1;

/** "about 4 min (3 min – 6 min), from 12 frames on 2 slots" */
export function etaText(eta) {
  if (!eta) return '';
  const plural = (n) => (n === 1 ? '' : 's');
  const tail = `from ${eta.samples} frame${plural(eta.samples)} on ${eta.slots} slot${plural(eta.slots)}`;
  return `About ${duration(eta.seconds)} left (${duration(eta.lowSeconds)} – ${duration(eta.highSeconds)}), ${tail}`;
}

function summaryText(s) {
  if (!s.framesDone) return '';
  const spread = s.p10Seconds !== null ? ` (10–90%: ${s.p10Seconds} – ${s.p90Seconds} s)` : '';
  const mem = s.peakMemoryMaxBytes !== null ? ` · highest peak memory ${bytes(s.peakMemoryMaxBytes)}` : '';
  return (
    `${s.framesDone} frame${s.framesDone === 1 ? '' : 's'} finished · median ${s.medianSeconds} s a ` +
    `frame${spread}${mem}`
  );
}

async function fetchAll(id) {
  const first = await api('GET', `/jobs/${encodeURIComponent(id)}/frames?pageSize=${PAGE}`);
  const frames = [...first.data.frames];
  const pages = Math.min(first.pagination.totalPages, Math.ceil(MAX_POINTS / PAGE));
  pagesRead = Math.max(1, pages);
  for (let page = 2; page <= pages; page++)
    frames.push(
      ...(await api('GET', `/jobs/${encodeURIComponent(id)}/frames?page=${page}&pageSize=${PAGE}`)).data.frames,
    );
  return { ...first.data, frames };
}

/** One point per frame: its latest attempt's figures. */
function series(frames) {
  const byFrame = new Map();
  for (const f of frames) byFrame.set(f.frame, f);
  const rows = [...byFrame.values()].sort((a, b) => a.frame - b.frame);
  return [
    rows.map((f) => f.frame),
    rows.map((f) => f.renderSeconds),
    rows.map((f) => (f.peakMemoryBytes === null ? null : f.peakMemoryBytes / 2 ** 20)),
  ];
}

function draw(box, data) {
  const width = Math.max(280, Math.min(960, box.clientWidth || 640));
  if (chart) {
    chart.setData(data);
    return;
  }
  chart = new uPlot(
    {
      width,
      height: 240,
      scales: { x: { time: false }, mem: {} },
      axes: [
        // Whole frames only: a job of two frames has no frame 1.5.
        {
          label: 'Frame',
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000],
        },
        { label: 'Seconds', scale: 'y' },
        { label: 'Peak memory (MiB)', scale: 'mem', side: 1, grid: { show: false } },
      ],
      series: [
        { label: 'Frame' },
        { label: 'Render time (s)', scale: 'y', stroke: '#2563eb', width: 2, points: { show: true, size: 6 } },
        { label: 'Peak memory (MiB)', scale: 'mem', stroke: '#d97706', width: 2, points: { show: true, size: 6 } },
      ],
    },
    data,
    box,
  );
}

/**
 * Refreshes the section for job `id`: the job page calls it every 2 s while the job renders
 * (`force` once it ended); a job of several pages is read once every 2 s per page.
 */
export async function refreshFrames(id, force = false) {
  if (!force && chartFor === id && Date.now() - lastRead < 2000 * pagesRead - 100) return;
  lastRead = Date.now();
  const stats = await fetchAll(id);
  if (chartFor !== id) closeFrames();
  chartFor = id;
  const data = series(stats.frames);
  const box = $('frames-chart');
  $('frames-section').hidden = false;
  $('frames-none').hidden = data[0].length > 0;
  box.hidden = data[0].length === 0;
  // What the chart shows, for assistive technology and tests: the canvas itself says nothing.
  box.dataset.points = String(data[0].length);
  box.setAttribute('aria-label', `Render time and peak memory of ${data[0].length} frames`);
  if (data[0].length > 0) draw(box, data);
  $('frames-summary').textContent = summaryText(stats.summary);
  $('job-eta').textContent = etaText(stats.eta);
  $('job-eta').hidden = !stats.eta;
  etaShown = Boolean(stats.eta);
}

/** True while the ETA with its band is on the page (one ETA on a page, not two that may differ). */
export function hasEtaBand() {
  return etaShown;
}

export function closeFrames() {
  chart?.destroy();
  chart = null;
  chartFor = null;
  lastRead = 0;
  pagesRead = 1;
  etaShown = false;
  const eta = $('job-eta');
  if (eta) {
    eta.textContent = '';
    eta.hidden = true;
  }
}
