// The job window's scheduling controls (on `window.rbScheduling`): an unfinished job's priority with
// Set priority, Pause / Resume, and Approve previews while the farm holds the frames after them. Each
// is the daemon's route (POST /jobs/:id/priority, /pause, /resume, /approve-previews), which passes it
// on to the service with the daemon's API key and answers the service's job; the tracker's next job
// event carries the change too. Shown only where the service answers the job's `scheduling` (the
// extension is offered). Text goes through textContent only.
'use strict';

(function () {
  const TERMINAL = new Set(['completed', 'failed', 'canceled']);
  /** Per job id: the controls' elements and the job id they act on. */
  const byJob = new Map();
  let ctx = null;

  async function act(id, path, body, pressed, words) {
    const c = byJob.get(id);
    pressed.disabled = true;
    try {
      const job = await ctx.api('POST', `/jobs/${encodeURIComponent(id)}/${path}`, body);
      ctx.showMessage('');
      if (c) {
        c.dirty = false;
        show(c, job);
      }
    } catch (err) {
      ctx.showMessage(`${words} failed: ${err.message}`);
    } finally {
      pressed.disabled = false;
    }
  }

  function controlsOf(id) {
    let c = byJob.get(id);
    if (c) return c;
    const box = ctx.make('div', 'scheduling');
    const line = ctx.make('div', 'scheduling-line');
    const input = ctx.make('input', 'priority');
    input.type = 'number';
    input.min = '0';
    input.max = '100';
    input.step = '1';
    input.setAttribute('aria-label', 'Priority (0-100, higher first)');
    c = { box, line, input, dirty: false };
    input.addEventListener('input', () => (c.dirty = true));
    const set = ctx.button('set-priority', 'Set priority', () => {
      const n = Number(input.value);
      if (!Number.isInteger(n) || n < 0 || n > 100) return ctx.showMessage('A priority is a whole number 0-100.');
      void act(id, 'priority', { priority: n }, set, 'Set priority');
    });
    c.pause = ctx.button('pause', 'Pause', () => void act(id, 'pause', undefined, c.pause, 'Pause'));
    c.resume = ctx.button('resume', 'Resume', () => void act(id, 'resume', undefined, c.resume, 'Resume'));
    c.approve = ctx.button(
      'approve',
      'Approve previews',
      () => void act(id, 'approve-previews', undefined, c.approve, 'Approve previews'),
    );
    box.append(line, input, set, c.pause, c.resume, c.approve);
    byJob.set(id, c);
    return c;
  }

  function show(c, job) {
    const s = job.scheduling;
    c.box.hidden = !s || TERMINAL.has(job.status);
    if (c.box.hidden) return;
    const parts = [`Priority ${s.priority}`];
    if (s.paused) parts.push('paused: no new frame starts');
    if (s.previews && s.previews.gate === 'waiting') parts.push('previews wait for approval');
    c.line.textContent = parts.join(' · ');
    // A value being typed is kept through the live updates.
    if (!c.dirty && document.activeElement !== c.input) c.input.value = String(s.priority);
    c.pause.hidden = s.paused;
    c.resume.hidden = !s.paused;
    c.approve.hidden = !(s.previews && s.previews.gate === 'waiting');
  }

  window.rbScheduling = {
    /** ctx: {api, make, showMessage}. */
    init(c) {
      ctx = c;
    },
    /** The controls of job `id` for its row's actions cell (the same element on every call). */
    controls(id) {
      return controlsOf(id).box;
    },
    /** Shows the controls for the job as last known. */
    update(job) {
      show(controlsOf(job.id), job);
    },
  };
})();
