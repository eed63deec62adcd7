// The job page's estimate (extension estimate): on a validated job, "Estimate" asks the farm to
// render sample frames (POST /jobs/{id}/estimate with the render's own requestedRenderConfig)
// and shows the figures as they are refined: wall time on this farm now, compute, cost, peak
// memory against the slots, output size, scene load, the frames they rest on, warnings, and what
// the estimate itself cost. "Cancel estimate" stops one that samples; "Render" starts the render
// with the estimate's own request, so the sampled frames are kept. An estimate the job already
// has is shown as it is; a service without the extension shows nothing of it.
import { api, ApiFailure } from './api.js';
import { figureRows, STATE_WORDS } from './estimate-figures.js';

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
