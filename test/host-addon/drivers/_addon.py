# Shared steps of the add-on drivers (run inside `blender -b` by test/host-addon/*.test.ts): enable the
# add-on as the artist's Blender has it, pump the add-on's timer tick by hand (background Blender
# runs no timers by itself), and draw its panels on a stand-in layout (no window exists headless).
#   - Blender 3.4 to 4.1: a legacy add-on, installed from the zip with addon_install into the user
#     scripts folder the test points BLENDER_USER_SCRIPTS at; its module is `renderbridge`.
#   - Blender 4.2+: an extension, installed by the test before this run with
#     `blender -c extension install-file -r user_default -e ZIP` into BLENDER_USER_RESOURCES. Runs
#     start with --factory-startup (blender/run.ts), which loads no preferences and so enables no
#     extension (4.3 then seems not to find it): it is enabled here by its module name.
import importlib
import json
import sys
import time

import bpy

EXTENSION = bpy.app.version >= (4, 2, 0)
MODULE = 'bl_ext.user_default.renderbridge' if EXTENSION else 'renderbridge'
PANELS = ('RENDERBRIDGE_PT_render', 'RENDERBRIDGE_PT_sidebar')


def args():
    return sys.argv[sys.argv.index('--') + 1:]


def install_and_enable(zip_path):
    """Enables the add-on (installing the zip first on a legacy build); returns its package."""
    if not EXTENSION:
        bpy.ops.preferences.addon_install(filepath=zip_path)
    bpy.ops.preferences.addon_enable(module=MODULE)
    if MODULE not in bpy.context.preferences.addons:
        raise SystemExit(f'{MODULE} did not enable in Blender {bpy.app.version_string}')
    return importlib.import_module(MODULE)


def prefs():
    return bpy.context.preferences.addons[MODULE].preferences


def session():
    return importlib.import_module(MODULE + '.session').current()


def await_daemon(timeout=15):
    """Pumps until the add-on has the daemon's health answer or gave up on it; the connection error, if any."""
    s = session()
    pump('the daemon health answer', lambda: s.health or s.connection_error, timeout)
    return s.connection_error


def activity(*names):
    """The session's activity as the test reads it: the attributes `names` under camelCase keys (job_id as
    jobId); None while there is none."""
    a = session().activity
    if a is None:
        return None
    return {n.split('_')[0] + ''.join(w.title() for w in n.split('_')[1:]): getattr(a, n) for n in names}


def pump(what, probe, timeout):
    """Calls the add-on's tick (which drains the worker's results) until probe() is truthy."""
    s = session()
    deadline = time.monotonic() + timeout
    while True:
        s.tick()
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f'timed out after {timeout} s waiting for {what}')
        time.sleep(0.1)


def run_op(op, *a, **kw):
    """Runs an operator as a button does; its result set, or the ERROR it reported (RuntimeError)."""
    try:
        return {'result': sorted(op(*a, **kw))}
    except RuntimeError as err:
        return {'result': ['CANCELLED'], 'error': str(err)}


def online_access():
    """bpy.app.online_access (Blender 4.2+), None where Blender has no such setting."""
    return getattr(bpy.app, 'online_access', None)


class Layout:
    """Stands in for bpy.types.UILayout: records what a draw() shows (labels as text, `!` first when
    drawn in alert; `[prop]` for a property; `<Label>` for a button) and fails as Blender would on a
    property or operator that does not exist."""

    def __init__(self, out):
        self.out = out
        self.alert = False
        self.scale_y = 1.0
        self.enabled = self.active = True

    def _child(self, *_a, **_kw):
        child = Layout(self.out)
        child.alert = self.alert
        return child

    box = column = row = split = grid_flow = column_flow = _child

    def separator(self, *_a, **_kw):
        pass

    def label(self, text='', **_kw):
        self.out.append(('!' if self.alert else '') + text)

    def prop(self, data, prop, **_kw):
        if not hasattr(data, prop):
            raise AttributeError(f'layout.prop(): {type(data).__name__} has no property "{prop}"')
        self.out.append(f'[{prop}]')

    def prop_search(self, data, prop, search_data, search_prop, **_kw):
        self.prop(data, prop)
        if not hasattr(search_data, search_prop):
            raise AttributeError(f'layout.prop_search(): no "{search_prop}" to search')

    def operator(self, idname, text=None, **_kw):
        mod, name = idname.split('.')
        if name not in dir(getattr(bpy.ops, mod)):
            raise AttributeError(f'layout.operator(): unknown operator "{idname}"')
        rna = getattr(getattr(bpy.ops, mod), name).get_rna_type()
        self.out.append(f'<{rna.name if text is None else text}>')
        return Props({p.identifier for p in rna.properties})


class Props:
    """The operator properties a button sets; only the operator's own."""

    def __init__(self, names):
        object.__setattr__(self, '_names', names)

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f'the operator has no property "{name}"')


class Drawn:
    """`self` of a draw() call: the stand-in layout, and the real object's attributes."""

    def __init__(self, real, layout):
        self._real, self.layout = real, layout

    def __getattr__(self, name):
        return getattr(self._real, name)


def draw_all():
    """{panel or 'preferences': [what its draw() showed]} for the add-on's panels and preferences."""
    drawn = {}
    for name in PANELS:
        cls = getattr(bpy.types, name)
        out = drawn[name] = []
        cls.draw(Drawn(None, Layout(out)), bpy.context)
    p = prefs()
    out = drawn['preferences'] = []
    type(p).draw(Drawn(p, Layout(out)), bpy.context)
    return drawn


def write(path, result):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(result, f, indent=1, default=str)
