// The job window's Estimate (on `window.rbEstimate`): on a validated job, what its render would take on
// the farm now, from sample frames the farm renders and keeps for the render. It is the daemon's
// submission of mode `estimate` by jobId (the add-on's Estimate uses the same route), followed through
// the `submission` events; Cancel estimate is DELETE /jobs/:id/estimate, and Render, once the
// estimate is ready, submits the job by id with the same (empty: the file's) settings, so the sampled
// frames are not rendered again. The figures read as in the add-on's panel (estimate_text.py); this page
// has no build step, so the wording is written again here. Text goes through textContent only.
'use strict';

(function () {
  /** Per job id: {submissionId, step, estimate, error, rendering, tr, body, buttons}. */
  const byJob = new Map();
  let ctx = null;

  function duration(seconds) {
    const s = Math.max(0, Math.round(seconds));
    const pad = (v) => String(v).padStart(2, '0');
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
    return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
  }

  function size(n) {
    for (const [unit, scale] of [
      ['GB', 1e9],
      ['MB', 1e6],
      ['KB', 1e3],
    ])
      if (n >= scale) return `${n < 10 * scale ? (n / scale).toFixed(1) : (n / scale).toFixed(0)} ${unit}`;
    return `${Math.floor(n)} B`;
  }

  const money = (n) => n.toFixed(2);
  const band = (b, fmt = duration) => `${fmt(b.value)} (${fmt(b.low)} to ${fmt(b.high)})`;

  /** The estimate in sentences: time, compute, cost, memory with their bands, the frames they rest on, the warnings. */
  function lines(e) {
    if (!e) return [];
    const f = e.figures;
    const sampled = (e.sampleFrames || []).join(', ');
    if (e.state === 'sampling' && !f) return ['Rendering sample frames on the farm…'];
    if (!f) return [];
    const out = [];
    if (e.state === 'sampling') out.push(`So far (sampling, from frames ${sampled}):`);
    out.push(`Time on the farm now: ${band(f.wallSeconds)} for ${f.framesToRender} frame(s) left`);
    out.push(`Compute: ${band(f.renderSeconds)} on ${f.device}`);
    out.push(f.cost ? `Cost: ${band(f.cost, money)}` : 'Cost: no price is set on this farm');
    out.push(`Memory: ${f.memory.summary}`);
    if (f.outputBytes) out.push(`Output: ${band(f.outputBytes, size)}`);
    // A figure may rest on fewer samples than frames were rendered (frames sampled in pairs).
    out.push(`Rests on ${f.wallSeconds.frames} sample(s) from frames ${sampled}`);
    const own = e.ownCost || {};
    if (e.state === 'ready' && own.renderSeconds)
      out.push(
        `The estimate itself took ${duration(own.renderSeconds)} of rendering` +
          (own.cost != null ? `, cost ${money(own.cost)}` : ''),
      );
    for (const w of e.warnings || []) out.push(`Warning: ${w}`);
    return out;
  }

  function entryFor(jobId) {
    let en = byJob.get(jobId);
    if (en) return en;
    const { tr, td } = ctx.detailRow('estimate-row', jobId);
    const head = ctx.make('div', 'estimate-head');
    const body = ctx.make('ul', 'estimate-lines');
    const cancel = ctx.button('cancel-estimate', 'Cancel estimate', () => void cancelEstimate(jobId));
    const render = ctx.button('render-estimated', 'Render (keeps the sampled frames)', () => void renderJob(jobId));
    td.append(head, body, cancel, render);
    en = {
      submissionId: null,
      step: null,
      estimate: null,
      error: null,
      rendering: false,
      tr,
      head,
      body,
      cancel,
      render,
    };
    byJob.set(jobId, en);
    return en;
  }

  function draw(en) {
    const e = en.estimate;
    // A canceled estimate ends its submission failed (ESTIMATE_CANCELED), but the artist asked for it.
    const canceled = e && e.state === 'canceled';
    en.tr.dataset.state = canceled ? 'canceled' : en.error ? 'failed' : e ? e.state : 'starting';
    const waiting = en.step === 'estimating' ? 'the farm renders sample frames…' : 'uploading nothing, starting…';
    en.head.textContent = en.error
      ? `Estimate: ${en.error}`
      : en.rendering
        ? 'Rendering the estimated job (the sampled frames are kept).'
        : e && e.state === 'ready'
          ? 'Estimate ready: Render renders this job, keeping the sampled frames.'
          : `Estimate: ${waiting}`;
    en.body.replaceChildren(
      ...lines(e).map((text) => {
        const li = ctx.make('li', text.startsWith('Warning:') || text.includes('does not fit') ? 'alert' : '');
        li.textContent = text;
        return li;
      }),
    );
    en.cancel.hidden = !(en.step === 'estimating' && !en.error && e && e.state === 'sampling');
    en.render.hidden = !(e && e.state === 'ready' && !en.error && !en.rendering && en.step === 'done');
  }

  async function start(jobId) {
    const en = entryFor(jobId);
    Object.assign(en, { estimate: null, error: null, rendering: false, step: null });
    draw(en);
    ctx.rerender();
    try {
      const sub = await ctx.api('POST', '/submissions', { jobId, mode: 'estimate' });
      en.submissionId = sub.id;
      onSubmission(sub);
    } catch (err) {
      en.error = err.message;
      draw(en);
    }
  }

  /** A `submission` event (or one read on load): an estimate's progress, or the render it led to. */
  function onSubmission(sub) {
    let en = [...byJob.values()].find((x) => x.submissionId === sub.id);
    if (!en && sub.estimate && sub.jobId) {
      // An estimate started elsewhere (the add-on, an earlier page): shown under its job too.
      en = entryFor(sub.jobId);
      en.submissionId = sub.id;
    }
    if (!en) return;
    en.step = sub.step;
    if (sub.estimate) en.estimate = sub.estimate;
    en.error = sub.step === 'failed' && sub.error ? sub.error.message : null;
    draw(en);
    ctx.rerender();
  }

  async function cancelEstimate(jobId) {
    const en = byJob.get(jobId);
    en.cancel.disabled = true;
    try {
      en.estimate = await ctx.api('DELETE', `/jobs/${encodeURIComponent(jobId)}/estimate`);
    } catch (err) {
      en.error = `Cancel failed: ${err.message}`;
    } finally {
      en.cancel.disabled = false;
      draw(en);
    }
  }

  async function renderJob(jobId) {
    const en = byJob.get(jobId);
    en.render.disabled = true;
    try {
      const sub = await ctx.api('POST', '/submissions', { jobId });
      en.rendering = true;
      en.submissionId = sub.id;
    } catch (err) {
      en.error = `Render failed: ${err.message}`;
    } finally {
      en.render.disabled = false;
      draw(en);
    }
  }

  window.rbEstimate = {
    /** `api(method, path, body)`, `make(tag, className)`, and `rerender()` to lay the rows out again. */
    init(c) {
      ctx = c;
    },
    lines,
    start,
    onSubmission,
    /** The estimate's row under the job's, when it has one. */
    rowsFor: (jobId) => (byJob.has(jobId) ? [byJob.get(jobId).tr] : []),
    /** Whether the job's Estimate button shows: a validated job without an estimate in progress. */
    canEstimate: (job) =>
      job.status === 'validated' &&
      !(byJob.has(job.id) && ['validating', 'estimating'].includes(byJob.get(job.id).step)),
  };
})();
