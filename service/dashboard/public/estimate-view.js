// The job page's estimate (extension estimate): on a validated job, "Estimate" asks the farm to
// render sample frames (POST /jobs/{id}/estimate with the render's own requestedRenderConfig)
// and shows the figures as they are refined: wall time on this farm now, compute, cost, peak
// memory against the slots, output size, scene load, the frames they rest on, warnings, and what
// the estimate itself cost. "Cancel estimate" stops one that samples; "Render" starts the render
// with the estimate's own request, so the sampled frames are kept. An estimate the job already
// has is shown as it is; a service without the extension shows nothing of it.
import { api, ApiFailure } from './api.js';
import { bytes, duration } from './format.js';

const $ = (id) => document.getElementById(id);
/** GET /extensions, asked once a page load (again after a failed ask). */
let offered = null;
/** The shown job, its estimate (null: none yet) and when that was read. */
let current = null;
let reading = false;
let reportError = () => {};
let jobChanged = () => {};

/** Fields of requestedRenderConfig (shared/api/render-config.ts) a job's `requestedConfig` may carry over. */
const REQUEST_FIELDS = [
  'colorManagementPreset',
  'frameRanges',
  'notes',
  'hostVersionForRender',
  'renderEngine',
  'compositorDevice',
  'computeDeviceType',
  'gpuCount',
  'sampleCount',
  'denoisingEnabled',
  'denoiserType',
  'denoisingUseGpu',
  'persistentDataEnabled',
  'resolution',
  'resolutionPercentage',
  'outputFormat',
  'outputMediaType',
  'fps',
  'fpsBase',
  'videoOutput',
  'useTiling',
  'tileSize',
  'outputSettings',
  'minimumRam',
  'activeCamera',
  'activeViewLayer',
];

/**
 * The render request the page sends: the CLI's defaults (the file's own settings), the job's
 * requested config, the frames field.
 */
export function requestFor(job, framesText) {
  const req = { colorManagementPreset: 'default' };
  for (const k of REQUEST_FIELDS)
    if (job.requestedConfig && job.requestedConfig[k] !== undefined) req[k] = job.requestedConfig[k];
  const frames = framesText
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (frames.length) req.frameRanges = frames;
  return req;
}

/** Called with the job a Render answered, so the page shows it at once; `fn(job, onError)`. */
export function onJobChanged(fn) {
  jobChanged = fn;
}

async function offersEstimate() {
  offered ??= api('GET', '/extensions').then(
    ({ data }) => data.extensions.some((e) => e.name === 'estimate' && e.version === 1),
    (err) => {
      offered = null;
      // A spec-only service has no GET /extensions: it offers nothing.
      if (err instanceof ApiFailure && (err.status === 404 || err.status === 405)) return false;
      throw err;
    },
  );
  return offered;
}

const money = (n) => n.toFixed(2);
const seconds1 = (n) => `${n.toFixed(1)} s`;
const bandText = (b, fmt = duration) => `${fmt(b.value)} (${fmt(b.low)} – ${fmt(b.high)})`;

/** One row of figures; the band's numbers ride along as data attributes for tools and tests. */
function row(name, label, text, band) {
  const div = document.createElement('div');
  div.dataset.figure = name;
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  dd.textContent = text;
  if (band)
    Object.assign(dd.dataset, {
      value: String(band.value),
      low: String(band.low),
      high: String(band.high),
      frames: String(band.frames),
    });
  div.append(dt, dd);
  return div;
}

const STATE_WORDS = {
  sampling: 'Rendering sample frames on the farm…',
  ready: 'Ready',
  failed: 'The estimate could not be made',
  canceled: 'Canceled',
};

function figureRows(e) {
  const f = e.figures;
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const rows = [];
  if (e.sampleFrames.length) {
    const of = e.framesTotal !== null ? ` of ${plural(e.framesTotal, 'frame')}` : '';
    rows.push(row('samples', 'Sample frames', `${e.sampleFrames.join(', ')}${of} (kept for the render)`));
  }
  if (f) {
    rows.push(
      row(
        'wall',
        'Wall time on this farm now',
        `${bandText(f.wallSeconds)} for ${plural(f.framesToRender, 'frame')} left, ` +
          `from ${plural(f.wallSeconds.frames, 'sample frame')}`,
        f.wallSeconds,
      ),
      row('compute', 'Compute', `${bandText(f.renderSeconds)} on ${f.device}`, f.renderSeconds),
      row(
        'normalized',
        'Normalized seconds',
        bandText(f.normalizedSeconds, (n) => String(Math.round(n))),
        f.normalizedSeconds,
      ),
      row('cost', 'Cost', f.cost ? bandText(f.cost, money) : 'No price configured', f.cost),
      row('memory', 'Peak memory', f.memory.summary, f.peakMemoryBytes),
    );
    if (f.outputBytes)
      rows.push(
        row(
          'output',
          'Output size',
          bandText(f.outputBytes, (n) => bytes(Math.round(n))),
          f.outputBytes,
        ),
      );
    if (f.loadSeconds)
      rows.push(row('load', 'Scene load', `${bandText(f.loadSeconds, seconds1)} per Blender start`, f.loadSeconds));
  }
  const own = e.ownCost;
  const ownCost = own.cost !== null ? ` · cost ${money(own.cost)}` : ' · no price configured';
  rows.push(
    row(
      'own',
      'The estimate itself',
      `${seconds1(own.renderSeconds)} of rendering · ${Math.round(own.normalizedSeconds)} normalized seconds${ownCost}`,
    ),
  );
  return rows;
}

/** Puts the estimate (or none) and the controls that fit the job's status on the page. */
function show() {
  if (!current) return;
  const { job, estimate: e } = current;
  const validated = job.status === 'validated';
  $('estimate-section').hidden = !validated && !e;
  const state = e ? e.state : 'none';
  $('estimate-state').dataset.state = state;
  $('estimate-state').textContent = e
    ? STATE_WORDS[e.state] || e.state
    : 'Know before you render: sample frames render on the farm, and are kept for the render.';
  $('estimate-reason').textContent = (e && e.reason) || '';
  $('estimate-reason').hidden = !(e && e.reason);
  $('estimate-figures').replaceChildren(...(e ? figureRows(e) : []));
  $('estimate-figures').hidden = !e;
  const warnings = e ? e.warnings : [];
  $('estimate-warnings').replaceChildren(
    ...warnings.map((w) => Object.assign(document.createElement('li'), { textContent: w })),
  );
  $('estimate-warnings').hidden = warnings.length === 0;
  // A ready estimate is answered again by a repeat: only a failed or canceled one can be asked again.
  $('estimate-form').hidden = !validated || state === 'sampling' || state === 'ready';
  $('estimate-start').textContent = state === 'none' ? 'Estimate' : 'Estimate again';
  $('estimate-cancel').hidden = state !== 'sampling';
  $('estimate-render').hidden = !validated || state !== 'ready';
}

async function read(force) {
  if (!current || reading) return;
  const { job, estimate } = current;
  const first = current.readAt === 0;
  // Sampling: figures are refined; ready on a validated job: the wall time is the farm's now.
  if (
    !force &&
    !first &&
    !(estimate && (estimate.state === 'sampling' || (estimate.state === 'ready' && job.status === 'validated')))
  )
    return;
  reading = true;
  try {
    const offers = await offersEstimate();
    // Said on the section, for tools and tests: whether the service was asked and offers estimates.
    $('estimate-section').dataset.offered = String(offers);
    if (!offers) {
      $('estimate-section').hidden = true;
      return;
    }
    let next = null;
    try {
      next = (await api('GET', `/jobs/${encodeURIComponent(job.id)}/estimate`)).data;
    } catch (err) {
      if (!(err instanceof ApiFailure && err.status === 404 && err.body.name === 'ESTIMATE_NOT_FOUND')) throw err;
    }
    if (!current || current.job.id !== job.id) return;
    current.estimate = next;
    current.readAt = Date.now();
    show();
  } finally {
    reading = false;
  }
}

/**
 * The job page calls this when it opens a job, on every live change and every 2 s while the job is
 * unfinished; it reads the estimate the first time, and again while it samples or, ready, while
 * the job waits for its render.
 */
export async function refreshEstimate(job, onError) {
  reportError = onError;
  if (!current || current.job.id !== job.id) {
    current = { job, estimate: null, readAt: 0 };
    $('estimate-section').hidden = true;
    $('estimate-error').hidden = true;
    $('estimate-frames').value = '';
  } else {
    current.job = job;
    if (current.readAt > 0) show();
  }
  await read(false);
}

export function closeEstimate() {
  current = null;
}

function showFailure(err) {
  if (err instanceof ApiFailure && err.status !== 401) {
    const detail = err.body.details && err.body.details[0] ? err.body.details[0].message : '';
    $('estimate-error').textContent = detail || err.message;
    $('estimate-error').hidden = false;
  } else reportError(err);
}

/** Runs a button's call with the button disabled and errors shown under the section. */
async function act(button, fn) {
  if (!current) return;
  button.disabled = true;
  $('estimate-error').hidden = true;
  try {
    await fn(current.job.id);
  } catch (err) {
    showFailure(err);
  } finally {
    button.disabled = false;
  }
}

const path = (id) => `/jobs/${encodeURIComponent(id)}/estimate`;

$('estimate-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void act($('estimate-start'), async (id) => {
    // A repeat of a failed request answers the failure until it is set aside.
    if (current.estimate && current.estimate.state === 'failed') await api('DELETE', path(id));
    const { data } = await api('POST', path(id), {
      requestedRenderConfig: requestFor(current.job, $('estimate-frames').value),
    });
    if (current && current.job.id === id) Object.assign(current, { estimate: data, readAt: Date.now() });
    show();
  });
});

$('estimate-cancel').addEventListener('click', () => {
  void act($('estimate-cancel'), async (id) => {
    const { data } = await api('DELETE', path(id));
    if (current && current.job.id === id) current.estimate = data;
    show();
  });
});

$('estimate-render').addEventListener('click', () => {
  void act($('estimate-render'), async (id) => {
    // The estimate's own request: the render then keeps the sampled frames.
    const job = await api('POST', `/jobs/${encodeURIComponent(id)}/render`, {
      requestedRenderConfig: current.estimate.requestedRenderConfig,
    });
    if (current && current.job.id === id) current.job = job;
    show();
    jobChanged(job, reportError);
  });
});
