# Shows the add-on's "save first" warnings in a real Blender window (save-first-window.test.ts starts
# Blender without -b, under Xvfb), for a file never saved, one with unsaved changes and a saved clean
# one. Usage:
#   blender --enable-event-simulate --python save_first_window.py -- ZIP RESULT.json SHOTS SAVED.blend
# The panel's own draw() is wrapped so that it draws into the real window through a recording layout
# that forwards every call to the real UILayout: the texts recorded were drawn in the window. A
# POST_PIXEL draw handler on the Properties editor says the region reached the screen afterwards.
# The Render on farm button is clicked with the mouse (events simulated at the button, found by
# hovering: --enable-event-simulate), so its reports reach the status bar as a click's do; they are
# read back from an Info editor of the same window. Each state is also saved as a screenshot into SHOTS. No daemon runs
# (XDG_STATE_HOME is empty): nothing here depends on one.
import os
import sys
import time
import traceback

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

zip_path, result_path, shots, saved = _addon.args()[:4]
_addon.install_and_enable(zip_path)
out = {'version': bpy.app.version_string, 'steps': {}, 'error': None}
seen = {'draws': 0, 'lines': [], 'painted': 0}


class RecordingLayout:
    """Forwards every call to the real UILayout and records what it shows: labels (`!` first when in
    alert) and buttons (`<text>`, the operator's label when no text is given)."""

    def __init__(self, real, lines):
        object.__setattr__(self, '_real', real)
        object.__setattr__(self, '_lines', lines)

    def __setattr__(self, name, value):
        setattr(self._real, name, value)

    def __getattr__(self, name):
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def call(*a, **kw):
            result = attr(*a, **kw)
            if name == 'label':
                self._lines.append(('!' if self._real.alert else '') + kw.get('text', a[0] if a else ''))
            elif name == 'operator':
                idname = kw.get('operator', a[0] if a else '')
                text = kw.get('text')
                if text is None:
                    mod, op = idname.split('.')
                    text = getattr(getattr(bpy.ops, mod), op).get_rna_type().name
                self._lines.append(f'<{text}>')
            if isinstance(result, bpy.types.UILayout):
                return RecordingLayout(result, self._lines)
            return result
        return call


panel = bpy.types.RENDERBRIDGE_PT_render
real_draw = panel.draw


def recording_draw(self, context):
    lines = []
    real_draw(_addon.Drawn(self, RecordingLayout(self.layout, lines)), context)
    seen['lines'] = lines
    seen['draws'] += 1


panel.draw = recording_draw


def painted():
    seen['painted'] += 1


handler = bpy.types.SpaceProperties.draw_handler_add(painted, (), 'WINDOW', 'POST_PIXEL')


def window():
    return bpy.context.window_manager.windows[0]


def area(kind, win=None):
    """The window's largest area of that kind (the Properties editor made of the 3D View, for the panel)."""
    areas = [a for a in (win or window()).screen.areas if a.type == kind]
    return max(areas, key=lambda a: a.width * a.height) if areas else None


def region(a):
    return next(r for r in a.regions if r.type == 'WINDOW')


def redrawn():
    """Waits until the panel was drawn again and its region then reached the screen."""
    draws, paints = seen['draws'], seen['painted']
    for a in window().screen.areas:
        a.tag_redraw()
    yield lambda: seen['draws'] > draws and seen['painted'] > paints


def screenshot(name):
    path = os.path.join(shots, f'{name}.png')
    with bpy.context.temp_override(window=window()):
        bpy.ops.screen.screenshot(filepath=path)
    return path


def reports():
    """The reports shown since the last call, read from the Info editor, then cleared there."""
    info = area('INFO')
    with bpy.context.temp_override(window=window(), area=info, region=region(info)):
        bpy.ops.info.select_all(action='SELECT')
        bpy.ops.info.report_copy()
        text = bpy.context.window_manager.clipboard
        bpy.ops.info.report_delete()
    return [line for line in text.splitlines() if line.strip()]


def button_at(idname, x):
    """Moves the mouse down the Properties editor at `x` until the button that runs `idname` is under
    it (the button Blender's "Copy Python Command" then names); yields its window position. Where it
    was found last is tried first."""
    props = area('PROPERTIES')
    reg = region(props)
    command = f'bpy.ops.{idname}('
    wm = bpy.context.window_manager
    # First off every button (the last click's may still be the active one), then down the editor.
    window().event_simulate(type='MOUSEMOVE', value='NOTHING', x=reg.x + 2, y=reg.y + reg.height - 2)
    yield from redrawn()
    for y in [*found.get(idname, []), *range(reg.y + reg.height - 4, reg.y, -12)]:
        window().event_simulate(type='MOUSEMOVE', value='NOTHING', x=x, y=y)
        # A button under the mouse becomes the active one once Blender has handled the move.
        for _ in range(10):
            yield None
            wm.clipboard = ''
            with bpy.context.temp_override(window=window(), area=props, region=reg):
                try:
                    bpy.ops.ui.copy_python_command_button()
                except RuntimeError:
                    continue  # no active button (yet)
            if wm.clipboard.startswith(command):
                found[idname] = [y]
                return x, y
            break
    raise AssertionError(f'no {idname} button in the Properties editor')


found = {}


def click(idname):
    """Clicks the panel's button with the mouse, as an artist does; says whether it could be clicked
    (its operator's poll, which greys the button out when false)."""
    props = area('PROPERTIES')
    with bpy.context.temp_override(window=window(), area=props, region=region(props)):
        mod, name = idname.split('.')
        enabled = getattr(getattr(bpy.ops, mod), name).poll('INVOKE_DEFAULT')
    # Render on farm ends the row of the panel's buttons (Check, Estimate, Render on farm).
    reg = region(props)
    x, y = yield from button_at(idname, reg.x + reg.width - 60)
    reports()
    yield from mouse_click(x, y)
    return {'enabled': enabled, 'at': [x, y]}


last_click = {'at': 0.0}


def mouse_click(x, y):
    """A left click at (x, y), once Blender's double-click time has passed since the last one (two
    quick clicks at one place would be read as a double click, which a button does not take)."""
    gap = bpy.context.preferences.inputs.mouse_double_click_time / 1000 * 2
    yield lambda: time.monotonic() - last_click['at'] > gap
    for value in ('PRESS', 'RELEASE'):
        window().event_simulate(type='LEFTMOUSE', value=value, x=x, y=y)
    last_click['at'] = time.monotonic()
    yield None


def activity():
    a = _addon.session().activity
    return None if a is None else {'mode': a.mode, 'step': a.step, 'error': a.error}


def state(name, **extra):
    yield from redrawn()
    out['steps'][name] = {'filepath': bpy.data.filepath, 'is_dirty': bpy.data.is_dirty,
                          'panel': list(seen['lines']), 'shot': screenshot(name), **extra}
    return out['steps'][name]


def escape():
    win = window()
    win.event_simulate(type='ESC', value='PRESS')
    win.event_simulate(type='ESC', value='RELEASE')


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
    step['shot_after_click'] = screenshot('never_saved_click')
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
    step['shot_after_click'] = screenshot('unsaved_changes_click')
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
    step['shot_after_click'] = screenshot('saved_clean_click')


TIMEOUT_S = 60
steps = script()
waiting = {'until': None, 'since': 0.0}


def finish():
    bpy.types.SpaceProperties.draw_handler_remove(handler, 'WINDOW')
    _addon.write(result_path, out)
    bpy.ops.wm.quit_blender()


def tick():
    """Runs the script up to its next wait; a wait is a condition polled here until it holds."""
    try:
        if waiting['until'] is not None:
            if not waiting['until']():
                if time.monotonic() - waiting['since'] > TIMEOUT_S:
                    raise TimeoutError(f'a wait of the script did not end in {TIMEOUT_S} s')
                return 0.02
        waiting['until'], waiting['since'] = next(steps), time.monotonic()
        return 0.02
    except StopIteration:
        finish()
    except Exception:
        out['error'] = traceback.format_exc()
        finish()
    return None


bpy.app.timers.register(tick, first_interval=0.5)
