# Drives the recent-jobs actions and the save-before-submit rule of the add-on against a real
# daemon, as an artist clicks them. Usage:
#   blender -b [FILE] --python jobs.py -- ZIP SCENARIO RESULT.json [ARGS...]
# Scenarios:
#   download JOB_ID DOWNLOADS [RECORD]  the job's Download button, then its Open folder button (the
#                                       xdg-open first on PATH writes the folder it got to RECORD),
#                                       and Open folder on a folder that does not exist
#   save-dirty                          edit the opened file (adds camera CamSaved), then Check
#   unsaved                             Check and Render on farm in a never saved file
import os
import shutil
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

args = _addon.args()
zip_path, scenario, result_path = args[:3]
extra = args[3:]
_addon.install_and_enable(zip_path)
s = _addon.session()
prefs = _addon.prefs()
out = {'scenario': scenario}


def job_row(job_id):
    r = s.jobs.find(job_id)
    if r is None:
        return None
    return {'status': r.status, 'label': r.label(), 'outDir': r.out_dir, 'download': r.download_state,
            'files': r.files, 'filesDone': r.files_done, 'skipped': r.skipped}


run_op = _addon.run_op


def listing(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)


_addon.pump('the daemon health answer', lambda: s.health or s.connection_error, 15)
out['connection_error'] = s.connection_error

if scenario == 'download':
    job_id, downloads = extra[0], extra[1]
    record = extra[2] if len(extra) > 2 else ''
    prefs.download_folder = downloads
    _addon.pump('the completed job in the list', lambda: (job_row(job_id) or {}).get('status') == 'completed', 30)
    out['before'] = job_row(job_id)
    # The row's Download button (panels.draw_jobs gives it the job id).
    out['download'] = run_op(bpy.ops.renderbridge.download_job, job_id=job_id)
    _addon.pump('the daemon to accept the download', lambda: s.notice, 15)
    out['notice'] = s.notice
    accepted = time.time()
    _addon.pump('the job row to show the download done',
                lambda: (s.jobs.updated_at and s.jobs.updated_at > accepted
                         and (job_row(job_id) or {}).get('download') in ('done', 'failed')), 60)
    out['job'] = job_row(job_id)
    folder = s.jobs.find(job_id).out_dir
    out['files'] = listing(folder) if folder and os.path.isdir(folder) else []
    if record:
        # The row's Open folder button (panels.draw_jobs gives it the row's folder).
        out['open'] = run_op(bpy.ops.renderbridge.open_folder, path=folder)
        deadline = time.monotonic() + 10
        while not os.path.exists(record) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(record, encoding='utf-8') as f:
            out['opened'] = f.read()
        out['open_missing'] = run_op(bpy.ops.renderbridge.open_folder, path=os.path.join(downloads, 'never-downloaded'))

elif scenario == 'save-dirty':
    path = bpy.data.filepath
    cam = bpy.data.objects.new('CamSaved', bpy.data.cameras.new('CamSavedData'))
    bpy.context.scene.collection.objects.link(cam)
    bpy.ops.ed.undo_push(message='Add CamSaved')  # what the UI does after an edit: the file is now dirty
    out['dirty_before'] = bpy.data.is_dirty
    out['mtime_before'] = os.stat(path).st_mtime_ns
    time.sleep(0.05)
    out['ops'] = run_op(bpy.ops.renderbridge.check)
    out['mtime_after'] = os.stat(path).st_mtime_ns
    # What is on disk now, read from a copy (5.x refuses to load from the open file itself).
    copy = os.path.join(os.path.dirname(path), 'on-disk-copy.blend')
    shutil.copyfile(path, copy)
    with bpy.data.libraries.load(copy) as (on_disk, _):
        out['objects_on_disk'] = sorted(on_disk.objects)
    _addon.pump('the check to end', lambda: s.activity.finished, 120)
    a = s.activity
    out['activity'] = {'step': a.step, 'error': a.error, 'jobId': a.job_id}

elif scenario == 'unsaved':
    out['filepath'] = bpy.data.filepath
    out['check'] = run_op(bpy.ops.renderbridge.check)
    out['render_invoke'] = run_op(bpy.ops.renderbridge.render, 'INVOKE_DEFAULT')
    out['activity'] = None if s.activity is None else s.activity.step
    # No activity means submit() never ran (it sets the activity before any request); a tick
    # starts nothing without one.
    s.tick()
    out['busy'] = s.busy

else:
    raise SystemExit(f'unknown scenario {scenario}')

_addon.write(result_path, out)
