// What the job page's action buttons share (scheduling.js, requeue.js): a link to another job, and
// one POST with its button held down while it runs, whose refusal shows next to the button. A lost
// session is not the button's business: it goes to app.js, which signs out.
import { api, ApiFailure } from './api.js';

/** A link to the job page of `id`, its text the id. */
export function jobLink(id) {
  const a = document.createElement('a');
  a.href = `#/jobs/${encodeURIComponent(id)}`;
  a.textContent = id;
  a.dataset.jobId = id;
  return a;
}

/**
 * POSTs `body` to `path` with `button` disabled meanwhile. Resolves to the answer, or to undefined
 * when the service refused (its first detail, else its message, shown in `errorBox`) or the session ended
 * (handed to `onError`).
 */
export async function postAction(path, body, { button, errorBox, onError }) {
  button.disabled = true;
  errorBox.hidden = true;
  try {
    return await api('POST', path, body);
  } catch (err) {
    if (err instanceof ApiFailure && err.status !== 401) {
      const detail = err.body.details && err.body.details[0] ? err.body.details[0].message : '';
      errorBox.textContent = detail || err.message;
      errorBox.hidden = false;
    } else onError(err);
    return undefined;
  } finally {
    button.disabled = false;
  }
}
