# Drives a real Blender window for the add-on's window drivers (started without -b, under Xvfb, with
# --enable-event-simulate): a panel drawn into the window through a recording layout that forwards
# every call to the real UILayout (the texts recorded were drawn in the window), a POST_PIXEL draw
# handler that says the region reached the screen afterwards, buttons found by hovering and clicked
# with simulated mouse events (so their reports reach the status bar as a click's do), reports read
# back from an Info editor, screenshots, and a script of steps run from a timer, each wait a condition
# polled until it holds.
import os
import time
import traceback

import bpy

import _addon

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


def record_panel(panel):
    """Wraps `panel`'s draw() so that what it draws is recorded into seen['lines'], and counts the
    Properties editor's paints into seen['painted']; returns what undoes the paint counting."""
    real_draw = panel.draw

    def recording_draw(self, context):
        lines = []
        real_draw(_addon.Drawn(self, RecordingLayout(self.layout, lines)), context)
        seen['lines'] = lines
        seen['draws'] += 1

    def painted():
        seen['painted'] += 1

    panel.draw = recording_draw
    handler = bpy.types.SpaceProperties.draw_handler_add(painted, (), 'WINDOW', 'POST_PIXEL')
    return lambda: bpy.types.SpaceProperties.draw_handler_remove(handler, 'WINDOW')


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


def screenshot(folder, name):
    """Saves the window as `folder`/`name`.png; returns its path."""
    path = os.path.join(folder, f'{name}.png')
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


def escape():
    win = window()
    win.event_simulate(type='ESC', value='PRESS')
    win.event_simulate(type='ESC', value='RELEASE')


TIMEOUT_S = 60


def run(steps, finish, out):
    """Runs the generator `steps` from a timer up to each wait (a condition, polled until it holds),
    then `finish()`; an error is written into out['error'] first."""
    waiting = {'until': None, 'since': 0.0}

    def tick():
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
