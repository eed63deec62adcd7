# Shows the add-on's "save first" warnings in a real Blender window (save-first-window.test.ts starts
# Blender without -b, under Xvfb), for a file never saved, one with unsaved changes and a saved clean
# one. Usage:
#   blender --enable-event-simulate --python save_first_window.py -- ZIP RESULT.json SHOTS SAVED.blend
# The panel's own draw() is wrapped so that it draws into the real window through a recording layout
# that forwards every call to the real UILayout: the texts recorded were drawn in the window. A
# POST_PIXEL draw handler on the Properties editor says the region reached the screen afterwards.
# The Render on farm button is clicked with the mouse (events simulated at the button, found by
# hovering: --enable-event-simulate), so its reports reach the status bar as a click's do; they are
# read back from an Info editor of the same window (_window.py drives the window). Each state is also
# saved as a screenshot into SHOTS. No daemon runs (XDG_STATE_HOME is empty): nothing here depends on one.
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402
import _window  # noqa: E402
from _window import area, click, escape, mouse_click, redrawn, region, reports, seen, window  # noqa: E402

zip_path, result_path, shots, saved = _addon.args()[:4]
_addon.install_and_enable(zip_path)
out = {'version': bpy.app.version_string, 'steps': {}, 'error': None}

remove_paint_handler = _window.record_panel(bpy.types.RENDERBRIDGE_PT_render)


def shot(name):
    return _window.screenshot(shots, name)


def activity():
    a = _addon.session().activity
    return None if a is None else {'mode': a.mode, 'step': a.step, 'error': a.error}


def state(name, **extra):
    yield from redrawn()
    out['steps'][name] = {'filepath': bpy.data.filepath, 'is_dirty': bpy.data.is_dirty,
                          'panel': list(seen['lines']), 'shot': shot(name), **extra}
    return out['steps'][name]


def script():
    # The splash screen of a start without a file: closed as an artist does (Esc).
    escape()
    win = window()
    # The Properties editor, large, on the Render tab where the panel is; an Info editor for the reports.
    area('DOPESHEET_EDITOR').type = 'INFO'
    big = area('VIEW_3D')
    big.type = 'PROPERTIES'
    yield lambda: True
    for a in win.screen.areas:
        if a.type == 'PROPERTIES':
            a.spaces.active.context = 'RENDER'
    yield from redrawn()
    with bpy.context.temp_override(window=win, area=big, region=region(big)):
        for _ in range(20):  # down to the add-on's panel, the last of the Render tab
            bpy.ops.view2d.scroll_down(page=True)
    reports()

    # 1. Never saved: the panel says so; the click opens Save As and says to click again after saving.
    step = yield from state('never_saved')
    step['click'] = yield from click('renderbridge.render')
    yield lambda: len(bpy.context.window_manager.windows) > 1
    yield from redrawn()
    step['reports'] = reports()
    step['file_browser'] = [w for w in bpy.context.window_manager.windows if area('FILE_BROWSER', w)] != []
    step['activity'] = activity()
    step['shot_after_click'] = shot('never_saved_click')
    browser = next(w for w in bpy.context.window_manager.windows if area('FILE_BROWSER', w))
    fb = area('FILE_BROWSER', browser)
    with bpy.context.temp_override(window=browser, area=fb, region=region(fb)):
        bpy.ops.file.cancel()
    yield lambda: len(bpy.context.window_manager.windows) == 1

    # 2. Saved, then changed: the panel says the buttons save first; the click asks before saving.
    bpy.ops.wm.save_as_mainfile(filepath=saved)
    yield from redrawn()  # the save's notifier marks the file saved when handled: change it after that
    bpy.context.scene.frame_end = 7
    bpy.ops.ed.undo_push(message='Change the frame range')
    reports()
    step = yield from state('unsaved_changes')
    mtime = os.stat(saved).st_mtime_ns
    step['click'] = yield from click('renderbridge.render')
    yield from redrawn()
    step['reports'] = reports()
    step['still_dirty'] = bpy.data.is_dirty
    step['saved_meanwhile'] = os.stat(saved).st_mtime_ns != mtime
    step['activity'] = activity()
    step['shot_after_click'] = shot('unsaved_changes_click')
    # Esc: the confirmation closes unanswered, and nothing is saved or sent.
    escape()
    yield from redrawn()
    step['after_escape'] = {'still_dirty': bpy.data.is_dirty, 'saved_meanwhile': os.stat(saved).st_mtime_ns != mtime,
                            'activity': activity()}
    # Clicked again and confirmed (the confirmation opens with its button under the mouse): saved, then sent.
    x, y = (yield from click('renderbridge.render'))['at']
    yield from redrawn()
    yield from mouse_click(x, y)
    yield lambda: _addon.session().activity is not None
    yield from redrawn()
    step['confirmed'] = {'still_dirty': bpy.data.is_dirty, 'saved_meanwhile': os.stat(saved).st_mtime_ns != mtime,
                         'reports': reports(), 'activity': activity()}
    yield lambda: not _addon.session().busy

    # 3. Saved and clean: no warning; the click goes on to pack, without saving or asking.
    bpy.ops.wm.save_mainfile()
    reports()
    step = yield from state('saved_clean')
    mtime = os.stat(saved).st_mtime_ns
    before = _addon.session().activity
    step['click'] = yield from click('renderbridge.render')
    yield lambda: _addon.session().activity is not before
    # Sent: with no daemon to take it, the activity ends saying how to start one.
    yield lambda: _addon.session().activity.finished
    yield from redrawn()
    step['reports'] = reports()
    step['saved_meanwhile'] = os.stat(saved).st_mtime_ns != mtime
    step['file_browser'] = len(bpy.context.window_manager.windows) > 1
    step['activity'] = activity()
    step['shot_after_click'] = shot('saved_clean_click')


def finish():
    remove_paint_handler()
    _addon.write(result_path, out)
    bpy.ops.wm.quit_blender()


_window.run(script(), finish, out)
