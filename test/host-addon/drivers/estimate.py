# Drives the add-on's Estimate and then Render on farm against a real daemon, as an artist clicks
# them (run by addon-estimate-e2e.test.ts). Usage:
#   blender -b FILE --python estimate.py -- ZIP RESULT.json FRAMES
# Presses Estimate with the panel's custom frames FRAMES, waits until the activity ends (the timer
# tick pumped by hand), records the estimate, the panel as drawn and the plan Render may reuse;
# then presses Render on farm and waits until that ends, recording its activity and files.
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

zip_path, result_path, frames = _addon.args()[:3]
_addon.install_and_enable(zip_path)
s = _addon.session()
out = {}
ACTIVITY = ('mode', 'step', 'message', 'error', 'job_id', 'pack_id', 'out_dir', 'finished')

try:
    out['connection_error'] = _addon.await_daemon()
    rb = bpy.context.scene.renderbridge
    rb.frame_mode = 'CUSTOM'
    rb.frame_ranges = frames
    bpy.ops.wm.save_mainfile()  # saved before pressing, as the artist does: Estimate then finds the file clean

    out['estimate_op'] = _addon.run_op(bpy.ops.renderbridge.estimate)
    steps = []

    def estimate_ended():
        a = s.activity
        if a.step not in steps:
            steps.append(a.step)
        if a.step == 'estimating' and a.estimate and 'cancel_poll' not in out:
            out['cancel_poll'] = bpy.ops.renderbridge.cancel_estimate.poll()
        return a.finished

    _addon.pump('the estimate to end', estimate_ended, 300)
    out['estimate_steps'] = steps
    out['estimate_activity'] = _addon.activity(*ACTIVITY)
    out['estimate'] = s.activity.estimate
    out['estimated_job'] = s.estimated.job_id if s.estimated else None
    out['panel'] = _addon.draw_all()['RENDERBRIDGE_PT_render']

    out['render_op'] = _addon.run_op(bpy.ops.renderbridge.render)
    _addon.pump('the render to end', lambda: s.activity.finished, 300)
    out['render_activity'] = _addon.activity(*ACTIVITY)
    folder = s.activity.out_dir
    out['files'] = sorted(os.listdir(folder)) if folder and os.path.isdir(folder) else []
    out['estimated_after'] = s.estimated is not None
finally:
    _addon.write(result_path, out)
