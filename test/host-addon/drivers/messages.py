# Causes, one after another in one Blender session, every message a Check or Render on farm can end
# with, through real daemons (test/host-addon/addon-messages-e2e.test.ts), and records what the artist saw:
# the operator's report, the activity, and the Renderbridge panel. Usage:
#   blender -b FILE --python messages.py -- ZIP RESULT.json TEXTURE NOWHERE SKEWED DEAD BROKEN ELSEWHERE
# FILE is a saved, clean .blend; TEXTURE an image file beside it (any bytes); the other four are
# XDG_STATE_HOME folders: NOWHERE holds no state file (no daemon runs), SKEWED, DEAD and BROKEN hold
# the state files of the daemons described in the test. The add-on finds its daemon through
# XDG_STATE_HOME at every call (daemon_client.state_file_path), so setting it here switches daemons
# as a restart of the artist's daemon with another farm would. ELSEWHERE is a folder this may create
# and remove (a folder that vanishes under a file open in Blender).
import os
import shutil
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

args = _addon.args()
zip_path, result_path, texture, nowhere, skewed, dead, broken, elsewhere = args[:8]
MAIN = os.environ['XDG_STATE_HOME']
_addon.install_and_enable(zip_path)
s = _addon.session()
_addon.prefs().download_folder = ''
out = {'steps': {}}


def use(state_home):
    os.environ['XDG_STATE_HOME'] = state_home


def activity():
    a = s.activity
    if a is None:
        return None
    return {'step': a.step, 'message': a.message, 'error': a.error, 'finished': a.finished,
            'packId': a.pack_id, 'submissionId': a.submission_id}


def record(name, op=None, **extra):
    """What the artist sees now: the button's report, the activity and the panel (alert lines start with `!`)."""
    out['steps'][name] = {'op': op, 'activity': activity(),
                          'panel': _addon.draw_all()['RENDERBRIDGE_PT_render'], **extra}


def press(op):
    """Clicks Check or Render on farm, waits for it to end, and records it (the op's report included)."""
    got = _addon.run_op(op)
    if got['result'] == ['FINISHED']:
        _addon.pump('the activity to end', lambda: s.activity.finished, 120)
    return got


_addon.pump('the daemon health answer', lambda: s.health or s.connection_error, 15)
out['connection_error'] = s.connection_error

# 1. The open file deleted on disk (by another program) while it has no unsaved changes.
blend = bpy.data.filepath
out['dirty_at_open'] = bpy.data.is_dirty
os.remove(blend)
record('gone', _addon.run_op(bpy.ops.renderbridge.check))
bpy.ops.wm.save_mainfile()

# The texture the scene uses (the test wrote it): an image file the pack links, not copies.
img = bpy.data.images.new('Paint', 4, 4)
img.source = 'FILE'
img.filepath = texture
img.use_fake_user = True

# 2. PACK_CHANGED: the texture repainted in place once packed, before its upload reads it.
op = _addon.run_op(bpy.ops.renderbridge.render)
_addon.pump('the pack id', lambda: s.activity.pack_id or s.activity.finished, 30)
# Waits without ticking: the add-on submits at the first tick that sees the pack ready.
client, deadline = s.client(), time.monotonic() + 120
while client.get_pack(s.activity.pack_id)['state'] == 'packing':
    if time.monotonic() > deadline:
        raise TimeoutError('timed out after 120 s waiting for the pack to be ready')
    time.sleep(0.05)
with open(texture, 'ab') as f:
    f.write(os.urandom(64))
_addon.pump('the activity to end', lambda: s.activity.finished, 120)
record('changed', op)

# 3. "Could not read the pack": the daemon stops while the pack is followed (the poll is tried again),
# then another daemon answers that does not have it (a restarted daemon keeps no packs).
op = _addon.run_op(bpy.ops.renderbridge.check)
use(nowhere)  # POST /packs went out already, to the main daemon; every later call goes here
_addon.pump('the failed poll', lambda: s.activity.message.startswith('Could not read the pack'), 30)
record('pack-unreadable', op)
use(skewed)
_addon.pump('the activity to end', lambda: s.activity.finished, 30)
record('pack-gone', op)

# 4. SUBMISSION_FAILED: the service hands out upload URLs that have expired (a clock far off).
record('skewed', press(bpy.ops.renderbridge.check))

# 5. SERVICE_UNREACHABLE: the daemon's farm URL is a port where nothing listens.
use(dead)
record('dead', press(bpy.ops.renderbridge.check))

# 6. PACK_FAILED: the daemon cannot make its pack folder.
use(broken)
record('broken', press(bpy.ops.renderbridge.check))

# 7. "Could not read the submission": the daemon restarts while the farm validates (no worker here).
use(MAIN)
op = _addon.run_op(bpy.ops.renderbridge.check)
_addon.pump('the farm to validate', lambda: s.activity.step == 'validating' or s.activity.finished, 120)
use(skewed)
_addon.pump('the activity to end', lambda: s.activity.finished, 30)
record('submission-gone', op)

# 8. Unsaved changes that cannot be saved: the file's folder vanished (a drive unplugged).
use(MAIN)
os.makedirs(elsewhere, exist_ok=True)
moved = os.path.join(elsewhere, 'moved.blend')
bpy.ops.wm.save_as_mainfile(filepath=moved)
shutil.rmtree(elsewhere)
cam = bpy.data.objects.new('CamEdited', bpy.data.cameras.new('CamEditedData'))
bpy.context.scene.collection.objects.link(cam)
bpy.ops.ed.undo_push(message='Add CamEdited')  # what the UI does after an edit: the file is now dirty
record('unsaveable', _addon.run_op(bpy.ops.renderbridge.check), path=bpy.data.filepath, dirty=bpy.data.is_dirty)

_addon.write(result_path, out)
