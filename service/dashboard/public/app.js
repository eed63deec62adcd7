// The farm dashboard: sign in with an API key (exchanged for an HttpOnly session cookie), then
// the workspace's jobs, live, and a page per job (#/jobs/<id>). Views are sections of index.html
// shown one at a time; a later view (workers, task logs) is one more section and route here.
import { ApiFailure, api, setCsrfToken } from './api.js';
import { cancelShown, closeJob, openJob, showJob, shownJobId } from './job-view.js';
import { clearJobRows, showJobRow } from './jobs-view.js';
import { startLive } from './live.js';
import { initThumbnails } from './thumbs-view.js';
import { clearWorkers, closeWorkers, openWorkers } from './workers-view.js';
import { clearShare, closeShare, openShare } from './share-view.js';

const $ = (id) => document.getElementById(id);
let session = null;
let stopLive = null;

const STATE_WORDS = { live: 'Live', polling: 'Updating every few seconds', connecting: 'Connecting…', offline: '' };

function setConnection(state) {
  const el = $('connection');
  el.dataset.state = state;
  el.textContent = STATE_WORDS[state] ?? state;
}

function notice(text) {
  $('notice').hidden = !text;
  $('notice').textContent = text || '';
}

function showView(name) {
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== `view-${name}`;
  const h = document.querySelector(`#view-${name} h1`);
  if (h) h.focus({ preventScroll: true });
}

const ENDED_WORDS = {
  idle: 'Your session ended after a while without activity. Sign in again.',
  expired: 'Your session reached its maximum length. Sign in again.',
  revoked: 'The API key of this session was revoked. Sign in with another key.',
};

/** Back to the sign-in form, saying why when the session ended by itself. */
function signedOut(reason) {
  session = null;
  setCsrfToken(null);
  if (stopLive) stopLive();
  stopLive = null;
  closeJob();
  clearJobRows();
  clearWorkers();
  clearShare();
  setConnection('offline');
  $('nav').hidden = true;
  $('sign-out').hidden = true;
  $('workspace').hidden = true;
  $('jobs-older').hidden = true;
  notice(reason ? ENDED_WORDS[reason] || 'Your session has ended. Sign in again.' : '');
  showView('signin');
}

/** Failures of background calls: an ended session goes back to sign-in, anything else is shown. */
function onError(err) {
  if (err instanceof ApiFailure && err.status === 401)
    return signedOut((err.body.metadata && err.body.metadata.session) || 'unknown');
  notice(err instanceof Error ? err.message : String(err));
}

/** The server ended the event stream's session: ask why (the 401 says), then sign out. */
function onSessionEnded() {
  api('GET', '/sessions/current').then(
    () => signedOut('unknown'),
    (err) => onError(err instanceof ApiFailure && err.status === 401 ? err : new ApiFailure(401, {})),
  );
}

function onJob(event) {
  showJobRow(event);
  if (shownJobId() === event.job.id) showJob(event, onError);
}

async function route() {
  if (!session) return;
  if (location.hash === '#/workers') {
    closeJob();
    closeShare();
    showView('workers');
    openWorkers(onError);
    return;
  }
  closeWorkers();
  if (location.hash === '#/share') {
    closeJob();
    showView('share');
    openShare(onError);
    return;
  }
  closeShare();
  const m = /^#\/jobs\/([^/]+)$/.exec(location.hash);
  if (m) {
    showView('job');
    try {
      await openJob(decodeURIComponent(m[1]), onError);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 404) notice('No such job in this workspace.');
      else onError(err);
    }
    return;
  }
  closeJob();
  showView('jobs');
}

function signedIn(s) {
  session = s;
  setCsrfToken(s.csrfToken);
  notice('');
  $('nav').hidden = false;
  $('sign-out').hidden = false;
  $('workspace').hidden = false;
  $('workspace').textContent = `Workspace: ${s.workspace.name}`;
  stopLive = startLive({ onJob, onState: setConnection, onSessionEnded, onError });
  void offerOlder();
  void route();
}

$('signin-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = $('api-key');
  const apiKey = input.value.trim();
  // The key leaves the page's memory at once: the cookie stands in for it from now on.
  input.value = '';
  $('signin-error').hidden = true;
  try {
    const { data } = await api('POST', '/sessions', { apiKey });
    signedIn(data);
  } catch (err) {
    $('signin-error').textContent =
      err instanceof ApiFailure && err.status === 401 ? 'That key is not valid (unknown or revoked).' : err.message;
    $('signin-error').hidden = false;
  }
});

$('sign-out').addEventListener('click', async () => {
  try {
    await api('DELETE', '/sessions/current');
  } catch (err) {
    if (!(err instanceof ApiFailure && err.status === 401)) return onError(err);
  }
  signedOut();
});

// The live feed covers the newest jobs and every running one; older pages are fetched on request.
let olderPage = 1;
$('jobs-older').addEventListener('click', async () => {
  try {
    const { jobs, pagination } = await api('GET', `/jobs?pageSize=50&page=${olderPage + 1}`);
    olderPage = pagination.page;
    for (const job of jobs) showJobRow({ job, progress: null });
    $('jobs-older').hidden = olderPage >= pagination.totalPages;
  } catch (err) {
    onError(err);
  }
});

async function offerOlder() {
  olderPage = 1;
  try {
    const { pagination } = await api('GET', '/jobs?pageSize=50&page=1');
    $('jobs-older').hidden = pagination.totalPages <= 1;
  } catch (err) {
    onError(err);
  }
}

$('job-cancel').addEventListener('click', async () => {
  $('job-cancel').disabled = true;
  try {
    await cancelShown();
  } catch (err) {
    $('job-cancel').disabled = false;
    onError(err);
  }
});

initThumbnails();

window.addEventListener('hashchange', () => void route());

// A reloaded page may still have a session: its cookie is sent, and the answer holds the CSRF token.
api('GET', '/sessions/current').then(
  ({ data }) => signedIn(data),
  (err) => signedOut(err instanceof ApiFailure && err.body.metadata ? err.body.metadata.session : undefined),
);
