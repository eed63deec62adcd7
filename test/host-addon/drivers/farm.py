# Drives the add-on's operators against a real daemon, as an artist clicks them, in the .blend
# Blender opened. Usage: blender -b FILE --python farm.py -- ZIP SCENARIO RESULT.json [DOWNLOADS]
# Scenarios:
#   check-missing  Check (stops before upload on the missing file), then Check with "Continue anyway",
#                  then Test connection
#   render         Render on farm of frames 1-3 of view layer Main into DOWNLOADS
#   cancel         Render on farm of a long range, then Cancel once it renders
#   no-key         Check with a daemon that has no API key
# Each writes what the panel would show (activity, jobs) to RESULT.json.
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

args = _addon.args()
zip_path, scenario, result_path = args[:3]
downloads = args[3] if len(args) > 3 else ''
_addon.install_and_enable(zip_path)
if len(args) > 4:
    bpy.ops.preferences.addon_enable(module=args[4])
s = _addon.session()
prefs = _addon.prefs()
prefs.download_folder = downloads
rb = bpy.context.scene.renderbridge
out = {'scenario': scenario, 'online_access': _addon.online_access()}


def activity():
    a = s.activity
    if a is None:
        return None
    return {'mode': a.mode, 'step': a.step, 'message': a.message, 'error': a.error, 'finished': a.finished,
            'missing': [d['path'] for d in a.missing], 'warnings': a.warnings, 'jobId': a.job_id, 'outDir': a.out_dir,
            'submissionId': a.submission_id}


def job_row(job_id):
    r = s.jobs.find(job_id)
    if r is None:
        return None
    return {'status': r.status, 'label': r.label(), 'outDir': r.out_dir, 'download': r.download_state}


health = _addon.pump('the daemon health answer', lambda: s.health or s.connection_error, 15)
out['health'] = s.health
out['connection_error'] = s.connection_error

if scenario == 'check-missing':
    out['first'] = sorted(bpy.ops.renderbridge.check())
    out['first_activity'] = activity()
    out['second'] = sorted(bpy.ops.renderbridge.check(allow_missing=True))
    _addon.pump('the check to end', lambda: s.activity.finished, 120)
    out['activity'] = activity()
    out['addons'] = [{'module': a.module, 'path': a.path, 'selected': a.selected} for a in rb.addons]
    out['test_ops'] = sorted(bpy.ops.renderbridge.test_connection())
    _addon.pump('the connection test', lambda: s.connection_test and not s.connection_test[1].startswith('Testing'), 30)
    out['connection_test'] = list(s.connection_test)

elif scenario == 'render':
    rb.frame_mode = 'CUSTOM'
    rb.frame_ranges = '1-3'
    rb.view_layer = 'Main'
    rb.camera = bpy.data.objects['CamB']
    rb.notes = 'from the add-on test'
    out['ops'] = sorted(bpy.ops.renderbridge.render())
    out['saved_dirty'] = bpy.data.is_dirty
    # The progress lines the panel showed on the way (packing, then uploading), each once.
    transfers = []

    def render_ended():
        t = s.activity.transfer
        if t and t not in transfers:
            transfers.append(t)
        return s.activity.finished
    _addon.pump('the render to end', render_ended, 240)
    out['transfers'] = transfers
    out['activity'] = activity()
    job_id = s.activity.job_id
    _addon.pump('the job list to show it downloaded', lambda: (job_row(job_id) or {}).get('download') == 'done', 30)
    out['job'] = job_row(job_id)
    folder = s.activity.out_dir or ''
    out['files'] = sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)

elif scenario == 'cancel':
    rb.frame_mode = 'CUSTOM'
    # Long enough to be caught rendering however fast the farm gets (400 frames of this scene
    # once outlasted the probe; now they finish before it looks).
    rb.frame_ranges = '1-20000'
    rb.view_layer = 'Main'
    out['ops'] = sorted(bpy.ops.renderbridge.render())
    _addon.pump('the job to render',
                lambda: s.activity.job_id and (job_row(s.activity.job_id) or {}).get('status') == 'rendering', 180)
    job_id = s.activity.job_id
    out['before'] = job_row(job_id)
    out['cancel'] = sorted(bpy.ops.renderbridge.cancel_job(job_id=job_id))
    _addon.pump('the job to be canceled', lambda: (job_row(job_id) or {}).get('status') == 'canceled', 60)
    out['job'] = job_row(job_id)
    out['notice'] = s.notice
    _addon.pump('the submission to end', lambda: s.activity.finished, 60)
    out['activity'] = activity()

elif scenario == 'no-key':
    out['ops'] = sorted(bpy.ops.renderbridge.check())
    _addon.pump('the check to fail', lambda: s.activity.finished, 60)
    out['activity'] = activity()

else:
    raise SystemExit(f'unknown scenario {scenario}')

# The panel as the artist sees it at the end (its activity box and the recent jobs).
out['panel'] = _addon.draw_all()['RENDERBRIDGE_PT_render']
_addon.write(result_path, out)
