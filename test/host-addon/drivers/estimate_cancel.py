# Presses the add-on's Cancel estimate while the farm renders the estimate's sample frames, as an
# artist clicks it (run by addon-estimate-e2e.test.ts). Usage:
#   blender -b FILE --python estimate_cancel.py -- ZIP RESULT.json SIGNALS
# Makes the frames slow (the file's own samples and resolution: the add-on sends no overrides), so
# the estimate is still sampling when Cancel comes; presses Estimate; once the activity is
# `estimating` writes the job id to SIGNALS/job and waits for SIGNALS/go, which the test writes when
# the job's Blender runs on the farm; then presses Cancel estimate and waits until the activity ends.
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

zip_path, result_path, signals = _addon.args()[:3]
_addon.install_and_enable(zip_path)
s = _addon.session()
out = {}
ACTIVITY = ('mode', 'step', 'message', 'error', 'job_id', 'finished', 'estimate')

try:
    out['connection_error'] = _addon.await_daemon()
    scene = bpy.context.scene
    scene.cycles.samples = 4000
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 320, 240, 100
    rb = scene.renderbridge
    rb.frame_mode = 'CUSTOM'
    rb.frame_ranges = '1-40'
    bpy.ops.wm.save_mainfile()

    out['estimate_op'] = _addon.run_op(bpy.ops.renderbridge.estimate)
    _addon.pump('the estimate to sample', lambda: s.activity.finished or (
        s.activity.step == 'estimating' and s.activity.job_id), 300)
    out['sampling'] = _addon.activity(*ACTIVITY)
    out['sampling_panel'] = _addon.draw_all()['RENDERBRIDGE_PT_render']
    if not s.activity.finished:
        with open(os.path.join(signals, 'job'), 'w') as f:
            f.write(s.activity.job_id)
        _addon.pump('the go from the test', lambda: os.path.exists(os.path.join(signals, 'go')), 300)
        out['cancel_poll'] = bpy.ops.renderbridge.cancel_estimate.poll()
        out['cancel_op'] = _addon.run_op(bpy.ops.renderbridge.cancel_estimate)
        out['canceling_message'] = s.activity.message
        _addon.pump('the canceled estimate to end', lambda: s.activity.finished, 120)
    out['ended'] = _addon.activity(*ACTIVITY)
    out['panel'] = _addon.draw_all()['RENDERBRIDGE_PT_render']
    out['estimated'] = s.estimated is not None
finally:
    _addon.write(result_path, out)
