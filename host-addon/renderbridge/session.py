# The add-on's per-session state, created at register and dropped at unregister: the worker thread,
# the daemon's health, the recent jobs, the Check / Render on farm in progress. `tick()` runs on
# Blender's main thread from a bpy.app.timers timer: it drains the worker's results, schedules the
# polls (health, GET /jobs, the running submission) and redraws the panels. Only the callbacks,
# which run inside tick(), touch bpy or this state; the tasks on the thread only call the client.
import time

import bpy

from . import addon_prefs, background, daemon_client, estimate_text, farm_status, jobs_state

TICK_S = 0.5
HEALTH_S = 5.0
JOBS_ACTIVE_S = 2.0
JOBS_IDLE_S = 10.0
SUBMISSION_S = 1.0
PACK_S = 0.5


class Session:
    def __init__(self):
        self.worker = background.Worker()
        self.jobs = jobs_state.JobsModel()
        self.activity = None
        self.health = None
        self.connection_error = None
        self.address_refused = False  # the address preference is not loopback: nothing is sent
        self.notice = None  # (level, message) of the last job action
        self.connection_test = None  # (level, message) of the last Test connection
        self._next = {'health': 0.0, 'jobs': 0.0, 'submission': 0.0, 'pack': 0.0}
        self._submit_args = None  # (settings, out_dir) of the activity, sent once its pack is ready
        self.estimated = None  # estimate_text.Plan of the last ready estimate: Render on farm renders its job

    def client(self):
        """A daemon client from the preferences (read here, on the main thread)."""
        prefs = addon_prefs.get()
        return daemon_client.DaemonClient(address=prefs.daemon_address)

    # -- the timer ------------------------------------------------------------------------------
    def tick(self):
        changed = self.worker.drain() > 0
        now = time.monotonic()
        if now >= self._next['health']:
            self._next['health'] = now + HEALTH_S
            self.poll_health()
        if now >= self._next['jobs']:
            busy = self.jobs.any_active or (self.activity is not None and not self.activity.finished)
            self._next['jobs'] = now + (JOBS_ACTIVE_S if busy else JOBS_IDLE_S)
            self.poll_jobs()
        act = self.activity
        if act is not None and act.pack_id and not act.submission_id and not act.finished and now >= self._next['pack']:
            self._next['pack'] = now + PACK_S
            self._poll_pack(act)
        if act is not None and act.submission_id and not act.finished and now >= self._next['submission']:
            self._next['submission'] = now + SUBMISSION_S
            self._poll_submission(act)
        if changed:
            redraw()
        return TICK_S

    def refresh_now(self):
        self._next['health'] = self._next['jobs'] = 0.0

    # -- polls ----------------------------------------------------------------------------------
    def poll_health(self):
        client = self.client()
        refused = daemon_client.check_address(client.address)
        self.address_refused = refused is not None
        if refused:
            self.health, self.connection_error = None, refused
        self.worker.run(lambda _post: client.health(), self._on_health, key='health')

    def _on_health(self, health, err):
        self.health = health if err is None else None
        self.connection_error = None if err is None else str(err)

    def test_connection(self):
        """Asks the daemon to reach its farm with its key (farm_status.test_connection), on the worker thread."""
        client = self.client()
        self.connection_test = ('INFO', 'Testing the connection...')
        self.worker.run(lambda _post: farm_status.test_connection(client), self._on_test, key='test')

    def _on_test(self, result, err):
        if err is not None:
            self.connection_test = ('ERROR', str(err))
        else:
            self.connection_test = ('INFO' if result['ok'] else 'ERROR', result['message'])
        self.refresh_now()

    def poll_jobs(self):
        client = self.client()
        self.worker.run(lambda _post: client.jobs(), self._on_jobs, key='jobs')

    def _on_jobs(self, jobs, err):
        if err is None:
            self.jobs.update(jobs)
        else:
            self.jobs.error = str(err)

    def _poll_submission(self, act):
        client = self.client()
        self.worker.run(lambda _post: client.submission(act.submission_id),
                        lambda sub, err: self._on_submission(act, sub, err), key='submission')

    def _on_submission(self, act, sub, err):
        if err is not None:
            if act.read_failed('submission', err):
                self._next['jobs'] = 0.0
            return
        ended = act.apply_submission(sub)
        act.message = STEP_TEXT.get(act.step, act.step)
        if act.mode == 'check' and ended and act.job_id:
            client = self.client()
            job_id = act.job_id
            # The daemon's farm read right after the job, so the result says which farm answered.
            self.worker.run(lambda _post: (client.job(job_id), farm_status.current_farm(client)),
                            lambda res, e: self._on_analysis(act, res, e))
        elif ended:
            act.finished = True
            if act.error is None and act.mode == 'render':
                act.message = f'Rendered; frames downloaded to {act.out_dir}'
            if act.error is None and act.mode == 'estimate' and act.plan is not None:
                act.plan.job_id = act.job_id
                self.estimated, act.message = act.plan, estimate_text.READY
            if act.mode == 'estimate' and (act.error or '').startswith('ESTIMATE_CANCELED'):
                act.message = 'Canceled'  # the artist asked for it: not "Failed"
            self._next['jobs'] = 0.0

    def _on_analysis(self, act, res, err):
        act.finished = True
        if err is not None:
            act.error = act.error or f'Could not read the analysis: {err}'
            return
        tracked, act.farm = res
        act.apply_analysis(tracked)
        n, b = len(act.warnings), len(act.blocking)
        where = f' on {act.farm}' if act.farm else ''
        act.message = f'Check done{where}: {n} warning(s), {b} blocking' if n else f'Check done{where}: no warnings'

    # -- Check / Render on farm ----------------------------------------------------------------
    @property
    def busy(self):
        return self.activity is not None and not self.activity.finished

    def submit(self, act, blend_path, dependencies, addons, settings, out_dir):
        """Starts a background pack (with the collected dependencies and add-ons) on the worker
        thread; tick() then follows it (GET /packs/:id) and submits it once ready. No call waits
        for the packing itself, however big the project."""
        client = self.client()
        self.activity = act
        self._submit_args = (settings, out_dir)
        self.worker.run(lambda _post: client.start_pack(blend_path, dependencies, addons),
                        lambda res, err: self._on_pack_started(act, res, err))

    def _on_pack_started(self, act, state, err):
        if err is not None:
            act.fail(str(err))
            return
        act.pack_id = state['packId']
        act.apply_pack(state)
        self._next['pack'] = 0.0

    def _poll_pack(self, act):
        client = self.client()
        self.worker.run(lambda _post: client.get_pack(act.pack_id),
                        lambda state, err: self._on_pack(act, state, err), key='pack')

    def _on_pack(self, act, state, err):
        if act.finished or act.submission_id or act is not self.activity:
            return
        if err is not None:
            act.read_failed('pack', err)
            return
        if act.apply_pack(state) != 'ready' or self.worker.busy('submit'):
            return
        settings, out_dir = self._submit_args
        client = self.client()
        _set_step(act, 'uploading')
        self.worker.run(lambda _post: client.submit(act.pack_id, settings, act.mode, out_dir),
                        lambda sub, e: self._on_submitted(act, sub, e), key='submit')

    def _on_submitted(self, act, sub, err):
        if err is not None:
            act.fail(str(err))
            return
        act.submission_id = sub['id']
        act.apply_submission(sub)
        act.message = STEP_TEXT.get(act.step, act.step)
        self._next['submission'] = 0.0

    def render_estimated(self, act, settings, out_dir):
        """Renders the estimated job (POST /submissions by jobId): no pack, no upload; the farm keeps the
        sampled frames. The estimate is used up: a job renders once."""
        client = self.client()
        job_id, self.estimated, self.activity = self.estimated.job_id, None, act
        act.job_id, act.step, act.message = job_id, 'validating', 'Rendering the estimated job...'
        self.worker.run(lambda _post: client.submit_job(job_id, settings, 'render', out_dir),
                        lambda sub, e: self._on_submitted(act, sub, e), key='submit')

    def cancel_estimate(self, act):
        """Stops the estimate on the farm; the submission's next poll then ends it (ESTIMATE_CANCELED)."""
        client = self.client()
        job_id = act.job_id
        act.message = 'Canceling the estimate...'
        self.worker.run(lambda _post: client.cancel_estimate(job_id),
                        lambda _res, err: err is not None and setattr(act, 'message', f'Cancel failed: {err}'))

    # -- job actions ----------------------------------------------------------------------------
    def job_action(self, verb, job_id, out_dir=None):
        client = self.client()
        call = {'cancel': lambda _p: client.cancel(job_id),
                'approve': lambda _p: client.approve_previews(job_id),
                'download': lambda _p: client.download(job_id, out_dir)}[verb]
        self.worker.run(call, lambda res, err: self._on_job_action(verb, job_id, res, err))

    def _on_job_action(self, verb, job_id, res, err):
        if err is not None:
            self.notice = ('ERROR', f'{verb.capitalize()} of job {job_id[:8]} failed: {err}')
        elif verb == 'cancel':
            self.jobs.replace(res)
            self.notice = ('INFO', f'Job {job_id[:8]}: {res["job"]["status"]}')
        elif verb == 'approve':
            self.notice = ('INFO', f'Job {job_id[:8]}: previews approved, the other frames render now')
        else:
            self.notice = ('INFO', f'Downloading job {job_id[:8]} to {res.get("outDir")}')
        self._next['jobs'] = 0.0

    def close(self):
        self.worker.stop()


STEP_TEXT = {
    'collecting': 'Collecting the files the scene uses...',
    'packing': 'Packing the project...',
    'uploading': 'Uploading...',
    'creating': 'Creating the job...',
    'validating': 'The farm is checking the scene...',
    'estimating': 'Estimating: the farm renders sample frames...',
    'rendering': 'Rendering on the farm (see Recent jobs)...',
    'done': 'Done',
    'failed': 'Failed',
}


def _set_step(act, step):
    act.step = step
    act.message = STEP_TEXT.get(step, step)


def redraw():
    wm = bpy.context.window_manager
    for win in getattr(wm, 'windows', []):
        for area in win.screen.areas:
            if area.type in ('PROPERTIES', 'VIEW_3D'):
                area.tag_redraw()


class Registration:
    """Holds the one Session between register() and unregister() (what Blender registration needs)."""
    session = None

    @classmethod
    def start(cls):
        cls.session = Session()
        bpy.app.timers.register(_tick, first_interval=TICK_S, persistent=True)

    @classmethod
    def stop(cls):
        if bpy.app.timers.is_registered(_tick):
            bpy.app.timers.unregister(_tick)
        if cls.session is not None:
            cls.session.close()
        cls.session = None


def _tick():
    s = Registration.session
    return None if s is None else s.tick()


def current():
    """The running Session (None when the add-on is not registered)."""
    return Registration.session
