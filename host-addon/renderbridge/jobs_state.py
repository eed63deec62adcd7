# What the panel shows, as plain data (no bpy): the recent jobs from the daemon's GET /jobs, and
# the one Check / Render on farm in progress (its step, the missing files, the analysis warnings).
import time

try:
    from . import transfer_text
except ImportError:  # imported as a top-level module by the plain-python tests
    import transfer_text

# Statuses the daemon polls fast for (docs/reference/daemon-api.md "Tracking"); Cancel is offered for these
# and `created`/`validated`.
ACTIVE_STATUSES = ('validating', 'booting', 'rendering', 'finalizing', 'debugging', 'suspended')
CANCELABLE_STATUSES = ACTIVE_STATUSES + ('created', 'validated')
FINISHED_STATUSES = ('completed', 'failed', 'canceled')
# Analysis warnings that stop a render (docs/reference/api-decisions.md "Validation").
BLOCKING_CODES = ('SCENE_NOT_FOUND', 'NO_CAMERA', 'UNSUPPORTED_ENGINE', 'NO_VIEW_LAYER_ENABLED', 'MISSING_LIBRARIES')


class JobRow:
    """One tracked job, flattened for drawing."""

    def __init__(self, tracked):
        job = tracked.get('job') or {}
        progress = tracked.get('progress') or {}
        download = tracked.get('download') or {}
        self.id = job.get('id', '')
        self.status = job.get('status', '')
        scene = job.get('sceneFile') or {}
        self.name = scene.get('name') or self.id[:8]
        self.created_at = job.get('createdAt', '')
        self.percent = progress.get('percent')
        self.frames_done = progress.get('framesDone')
        self.frames_total = progress.get('framesTotal')
        self.download_state = download.get('state')
        self.out_dir = download.get('outDir')
        self.files_done = download.get('filesDone')
        self.files = download.get('files')
        self.skipped = download.get('skipped') or 0  # complete files the download left alone
        failed = job.get('failedReason') or {}
        details = failed.get('errorDetails') or {}
        self.failure = details.get('message') if isinstance(details.get('message'), str) else failed.get('name')
        previews = (job.get('scheduling') or {}).get('previews') or {}
        # The farm holds the frames after the previews until "go" (extension scheduling).
        self.awaiting_approval = previews.get('gate') == 'waiting'

    @property
    def active(self):
        return self.status in ACTIVE_STATUSES

    @property
    def cancelable(self):
        return self.status in CANCELABLE_STATUSES

    def label(self):
        text = f'{self.name}: {self.status}'
        if self.status == 'rendering' and self.percent is not None:
            text += f' {self.percent:.0f}%'
        if self.frames_total:
            text += f' ({self.frames_done or 0}/{self.frames_total} frames)'
        if self.download_state == 'downloading':
            text += f', downloading {self.files_done or 0}/{self.files or 0}'
        elif self.download_state == 'done':
            text += ', downloaded'
        elif self.download_state == 'failed':
            text += ', download failed'
        return text


class JobsModel:
    """The recent jobs, newest first, as last read from GET /jobs."""

    def __init__(self, limit=8):
        self.limit = limit
        self.rows = []
        self.updated_at = None
        self.error = None

    def update(self, tracked_jobs):
        rows = [JobRow(t) for t in tracked_jobs]
        self.rows = sorted(rows, key=lambda r: r.created_at, reverse=True)[:self.limit]
        self.updated_at = time.time()
        self.error = None

    def replace(self, tracked):
        """Updates one job from a TrackedJob (e.g. the answer of cancel)."""
        row = JobRow(tracked)
        self.rows = [row if r.id == row.id else r for r in self.rows]

    def find(self, job_id):
        return next((r for r in self.rows if r.id == job_id), None)

    @property
    def any_active(self):
        return any(r.active or r.download_state in ('pending', 'downloading') for r in self.rows)


class Activity:
    """The Check or Render on farm the artist started last."""

    def __init__(self, mode):
        self.mode = mode  # 'check', 'estimate' or 'render'
        self.step = 'collecting'
        self.message = ''
        self.error = None  # a readable message when it failed
        self.missing = []  # dependency dicts whose files are absent
        self.submission_id = None
        self.job_id = None
        self.out_dir = None
        self.warnings = []  # analysis warnings {code, message, blocking}
        self.pack_warnings = []  # messages of the daemon's pack warnings
        self.pack_id = None  # the background pack (POST /packs) this submission waits for
        self.transfer = None  # the packing / uploading line (bytes, rate, time left), None otherwise
        self.farm = ''  # the farm that answered: its service URL and the daemon's profile (farm_status.farm_of)
        self.estimate = None  # the service's Estimate (mode 'estimate'), refined while it samples
        self.plan = None  # estimate_text.Plan: what an estimate was made of, for Render on farm to reuse
        self.finished = False

    @property
    def title(self):
        """The button that started it, as the artist reads it."""
        return {'check': 'Check', 'estimate': 'Estimate'}.get(self.mode, 'Render on farm')

    def fail(self, message):
        self.error = message
        self.step = 'failed'
        self.message = 'Failed'
        self.finished = True

    def read_failed(self, what, err):
        """A poll of the activity's `what` ('pack' or 'submission') failed with `err` (a DaemonError). A 404: the
        daemon no longer has it (it was restarted: packs and submissions live in its memory; or the pack expired),
        so no later poll can succeed: the activity fails, saying what to do. Anything else (the daemon not running,
        busy) is shown as the step's message and the next poll tries again. True when the activity ended."""
        if getattr(err, 'status', None) == 404:
            if what == 'pack':
                self.fail('Could not read the pack: the daemon no longer has it (it was restarted, or the pack '
                          f'expired), so nothing was sent: press "{self.title}" again.')
            else:
                self.fail('Could not read the submission: the daemon no longer has it (it was restarted): '
                          f'see Recent jobs for its job; if it is not there, press "{self.title}" again.')
            return True
        self.message = f'Could not read the {what}: {err}'
        return False

    def apply_pack(self, state):
        """Takes a background pack's state (GET /packs/:id): 'ready', 'failed' (the activity then
        failed), or None while it packs."""
        self.transfer = transfer_text.pack_line(state)
        if state.get('state') == 'ready':
            result = state.get('result') or {}
            self.pack_warnings = [w.get('message', '') for w in result.get('warnings', [])]
            return 'ready'
        if state.get('state') == 'failed':
            err = state.get('error') or {}
            self.transfer = None
            self.fail(f"{err.get('name', 'PACK_FAILED')}: {err.get('message', 'the project could not be packed')}")
            return 'failed'
        return None

    def apply_submission(self, sub):
        """Takes a Submission from the daemon; True once it ended (done or failed)."""
        self.step = sub.get('step', self.step)
        self.transfer = transfer_text.submission_line(sub)
        self.job_id = sub.get('jobId') or self.job_id
        self.out_dir = sub.get('outDir') or self.out_dir
        self.estimate = sub.get('estimate') or self.estimate
        if sub.get('step') == 'failed':
            err = sub.get('error') or {}
            self.error = f"{err.get('name', 'SUBMISSION_FAILED')}: {err.get('message', 'the submission failed')}"
            return True
        return sub.get('step') == 'done'

    def apply_analysis(self, tracked):
        """The warnings of the job's analysis (`analysis.output.analysisWarnings`), else those a failed
        validation carries (`failedReason.errorDetails.warnings`)."""
        job = tracked.get('job') or {}
        output = (job.get('analysis') or {}).get('output') or {}
        failed = ((job.get('failedReason') or {}).get('errorDetails') or {}).get('warnings')
        warnings = output.get('analysisWarnings') or (failed if isinstance(failed, list) else [])
        self.warnings = [{'code': w.get('code', ''), 'message': w.get('message', ''),
                          'blocking': bool(w.get('blocking')) or w.get('code') in BLOCKING_CODES} for w in warnings]

    @property
    def blocking(self):
        return [w for w in self.warnings if w['blocking']]
