# Render setup, run inside Blender by the render task (blender/render/render-invocation.ts):
#   blender -b -Y --factory-startup -noaudio FILE -S SCENE --python render_setup.py \
#       -o OUT/f_#### -s A -e B -j STEP -a -- --settings SETTINGS.json
# Blender runs `--python` after loading FILE and BEFORE it reaches `-o`/`-a`, so everything set here
# applies to the render that follows. The warm render loop (render_loop.py) imports it and calls
# apply_settings once per process. Settings (see RenderSettings in render-settings.ts) are
# applied to the scene; a key that is absent or null leaves the file's own value.
# Prints `RB_WARNING: text` for each thing it could not honour, `RB_DEVICE {json}` (the device the
# render really uses, for billing) and, last, `RB_SETUP_OK {json}`.
# A bad scene/camera/view layer/engine or an unusable device raises SetupError: with
# `--python-exit-code 3` Blender then exits 3 without rendering, the message on the last lines.
# Never touches the network; the only paths it sets are inside settings.compositeDir, and, first of
# all, the packer's path remaps (settings.pathRemaps, see ../remap/remap_paths.py) inside the project folder.
import json
import os
import sys

import bpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The path remaps are their own contract in blender/remap/ (the analysis applies them too).
sys.path.insert(1, os.path.join(os.path.dirname(HERE), 'remap'))
from render_setup_outputs import (  # noqa: E402  (sibling module)
    WARNINGS, enum_values, fail, redirect_file_outputs, set_opt, set_output, warn)
import remap_paths  # noqa: E402  (../remap: the packer's path remaps)

GPU_TYPES = ('CUDA', 'OPTIX', 'HIP', 'METAL', 'ONEAPI')


def read_settings(argv):
    args = argv[argv.index('--') + 1:] if '--' in argv else []
    if '--settings' not in args or args.index('--settings') + 1 >= len(args):
        fail('usage: ... --python render_setup.py ... -- --settings SETTINGS.json')
    with open(args[args.index('--settings') + 1], encoding='utf-8') as f:
        return json.load(f)


def pick_scene(name):
    scene = bpy.context.scene
    if name and scene.name != name:
        # `-S` with an unknown name only prints an error; refuse to render another scene.
        fail('scene %r not found (scenes: %s)' % (name, ', '.join(s.name for s in bpy.data.scenes)))
    return scene


def set_camera(scene, name):
    if not name:
        return
    obj = scene.objects.get(name)
    if obj is None or obj.type != 'CAMERA':
        cams = ', '.join(sorted(o.name for o in scene.objects if o.type == 'CAMERA')) or 'none'
        fail('camera %r not found in scene %r (cameras: %s)' % (name, scene.name, cams))
    if scene.camera != obj:
        # Markers bound to cameras switch scene.camera per frame; a chosen camera must win.
        bound = [m for m in scene.timeline_markers if m.camera is not None]
        for m in bound:
            m.camera = None
        if bound:
            warn('%d camera-bound timeline markers unbound so that %r renders every frame' % (len(bound), name))
    scene.camera = obj


def set_view_layer(scene, name):
    if not name:
        return
    if scene.view_layers.get(name) is None:
        fail('view layer %r not found in scene %r (view layers: %s)'
             % (name, scene.name, ', '.join(v.name for v in scene.view_layers)))
    for vl in scene.view_layers:
        vl.use = vl.name == name


# EEVEE's id by version: BLENDER_EEVEE up to 4.1, BLENDER_EEVEE_NEXT in 4.2-4.x, BLENDER_EEVEE again
# from 5.0 (likewise Workbench's _NEXT id of some 4.x builds). A job analysed on one build may render
# on another: either name means the EEVEE of the build at hand.
ENGINE_ALIASES = {'BLENDER_EEVEE': 'BLENDER_EEVEE_NEXT', 'BLENDER_EEVEE_NEXT': 'BLENDER_EEVEE',
                  'BLENDER_WORKBENCH': 'BLENDER_WORKBENCH_NEXT', 'BLENDER_WORKBENCH_NEXT': 'BLENDER_WORKBENCH'}


def engine_id(scene, engine):
    """The id this build gives `engine` (its alias when the build only knows that one)."""
    have = enum_values(scene.render, 'engine')
    alias = ENGINE_ALIASES.get(engine)
    if have and engine not in have and alias in have:
        return alias
    return engine


def set_engine(scene, engine):
    if not engine:
        return
    try:
        scene.render.engine = engine_id(scene, engine)
    except TypeError:
        fail('render engine %r is not available in Blender %s' % (engine, bpy.app.version_string))


def set_denoise(scene, d):
    """Returns whether denoising is on. Turning it off is always possible; turning it on needs a
    denoiser this build has. `d` None keeps the file's choice, unless the build cannot run it: a
    render with denoising on never fails for want of a denoiser (Debian's 3.4 and 4.3 have none:
    Cycles would stop with "Build without OpenImageDenoise"), it renders without and says so."""
    if scene.render.engine != 'CYCLES':
        return False
    cy = scene.cycles
    on = bool(cy.use_denoising) if d is None else bool(d.get('enabled'))
    want = None if d is None else d.get('denoiser')
    if on:
        have = enum_values(cy, 'denoiser')
        if not have:
            warn('Blender %s has no denoiser (no OpenImageDenoise, no OptiX): denoising off'
                 % bpy.app.version_string)
            on = False
        elif want and want not in have:
            warn('denoiser %s is not in this build (has: %s): denoising off' % (want, ', '.join(have)))
            on = False
        elif want:
            cy.denoiser = want
        elif cy.denoiser not in have:  # the file's denoiser is not in this build: the build's own
            pick = 'OPENIMAGEDENOISE' if 'OPENIMAGEDENOISE' in have else have[0]
            warn('the file\'s denoiser is not in this build: denoising with %s' % pick)
            cy.denoiser = pick
    if d is None:  # the file's own settings stand, unless the build cannot run them
        if not on:
            cy.use_denoising = False
        return on
    cy.use_denoising = on
    for vl in scene.view_layers:
        if hasattr(vl, 'cycles'):
            vl.cycles.use_denoising = on
    if on and d is not None and d.get('useGpu') is not None and hasattr(cy, 'denoising_use_gpu'):
        cy.denoising_use_gpu = bool(d['useGpu'])
    return on


def set_device(scene, dev):
    """Returns the summary of the device really used."""
    if scene.render.engine != 'CYCLES':
        return {'device': 'ENGINE_DEFAULT'}
    kind = (dev or {}).get('type') or 'CPU'
    if kind == 'CPU':
        scene.cycles.device = 'CPU'
        return {'device': 'CPU'}
    if kind not in GPU_TYPES:
        fail('unknown compute device type %r' % kind)
    prefs = bpy.context.preferences.addons['cycles'].preferences
    problem = None
    if kind not in [t[0] for t in prefs.get_device_types(bpy.context)]:
        problem = '%s is not compiled into Blender %s' % (kind, bpy.app.version_string)
    else:
        prefs.compute_device_type = kind
        if hasattr(prefs, 'refresh_devices'):
            prefs.refresh_devices()
        else:
            prefs.get_devices()
        for d in prefs.devices:  # GPUs hidden by *_VISIBLE_DEVICES are not listed at all
            d.use = d.type == kind
        used = [d.name for d in prefs.devices if d.use]
        if used:
            scene.cycles.device = 'GPU'
            return {'device': kind, 'gpus': used}
        problem = 'no %s device is visible' % kind
    if not dev.get('allowCpuFallback'):
        fail(problem)
    warn(problem + ': rendering on the CPU')
    scene.cycles.device = 'CPU'
    return {'device': 'CPU'}


def report_device(dev, used):
    """Prints `RB_DEVICE {json}`: the device the render really uses, which the worker bills.

    `device` is CPU after a fallback (no usable GPU of the asked type) and ENGINE_DEFAULT for
    engines other than Cycles; `gpus` counts the GPUs Cycles will render with.
    """
    line = {'requested': (dev or {}).get('type') or 'CPU', 'device': used['device'],
            'gpus': len(used.get('gpus') or [])}
    print('RB_DEVICE ' + json.dumps(line), flush=True)


def set_color_management(scene, preset):
    if preset != 'aces':
        return None
    views = enum_values(scene.view_settings, 'view_transform')
    aces = [v for v in views if 'ACES' in v.upper()]
    if not aces:
        warn('no ACES view transform in Blender %s (view transforms: %s): colour management left as in the file'
             % (bpy.app.version_string, ', '.join(views)))
        return None
    scene.view_settings.view_transform = aces[0]
    return aces[0]


def enable_addons(addons):
    import addon_utils
    paths = [p for p in (addons or {}).get('paths') or [] if p]
    for p in reversed(paths):  # bundled add-ons win over Blender's own ones of the same name
        if p not in sys.path:
            sys.path.insert(0, p)
    enabled = []
    for mod in (addons or {}).get('ids') or []:
        errors = []
        try:
            m = addon_utils.enable(mod, default_set=True, handle_error=errors.append)
        except Exception as e:  # an add-on's register() can raise anything
            m, errors = None, [e]
        if m is None:
            warn('add-on %r could not be enabled: %s' % (mod, errors[0] if errors else 'not found'))
        else:
            enabled.append(mod)
    return enabled


def remap(spec):
    """Points the file at the packed copies of files from outside the project; returns the count."""
    if not spec or not spec.get('remaps'):
        return 0
    result = remap_paths.apply_remaps(spec.get('root') or '', spec['remaps'])
    problem = remap_paths.describe_failures(result)
    if problem:
        warn(problem)
    return len(result['remapped'])


def apply_settings(s):
    """Applies settings `s` to the scene, prints RB_DEVICE and RB_SETUP_OK; returns the scene."""
    remapped = remap(s.get('pathRemaps'))
    scene = pick_scene(s.get('scene'))
    addons = enable_addons(s.get('addons'))
    set_engine(scene, s.get('engine'))
    set_camera(scene, s.get('camera'))
    set_view_layer(scene, s.get('viewLayer'))
    r = scene.render
    res = s.get('resolution')
    if res:
        r.resolution_x, r.resolution_y = int(res[0]), int(res[1])
    if s.get('resolutionPercentage') is not None:
        r.resolution_percentage = int(s['resolutionPercentage'])
    if s.get('samples') is not None:
        if r.engine == 'CYCLES':
            scene.cycles.samples = int(s['samples'])
        elif hasattr(scene, 'eevee') and r.engine.startswith('BLENDER_EEVEE'):  # either id
            scene.eevee.taa_render_samples = int(s['samples'])
    denoise = set_denoise(scene, s.get('denoise'))
    device = set_device(scene, s.get('device'))
    report_device(s.get('device'), device)
    if s.get('compositorDevice') and hasattr(r, 'compositor_device'):
        set_opt(r, 'compositor_device', s['compositorDevice'], 'compositor device')
    set_output(scene, s.get('output'))
    if s.get('fps') is not None:
        r.fps = int(s['fps'])
    if s.get('fpsBase') is not None:
        r.fps_base = float(s['fpsBase'])
    if s.get('persistentData') is not None:
        r.use_persistent_data = bool(s['persistentData'])
    tiling = s.get('tiling')
    if tiling and r.engine == 'CYCLES':
        set_opt(scene.cycles, 'use_auto_tile', tiling.get('enabled'), 'tiling')
        set_opt(scene.cycles, 'tile_size', tiling.get('tileSize'), 'tile size')
    view = set_color_management(scene, s.get('colorManagement'))
    nodes = redirect_file_outputs(scene, s.get('compositeDir'), s.get('compositeFolders'))
    summary = dict(device)
    summary.update({'scene': scene.name, 'camera': scene.camera.name if scene.camera else None,
                    'viewLayers': [v.name for v in scene.view_layers if v.use], 'engine': r.engine,
                    'denoise': denoise, 'resolution': [r.resolution_x, r.resolution_y, r.resolution_percentage],
                    'format': r.image_settings.file_format, 'viewTransform': view or scene.view_settings.view_transform,
                    'addons': addons, 'fileOutputs': nodes, 'remappedPaths': remapped, 'warnings': WARNINGS})
    print('RB_SETUP_OK ' + json.dumps(summary), flush=True)
    return scene


# Blender runs a `--python` script as __main__; render_loop.py imports this module instead.
if __name__ == '__main__':
    apply_settings(read_settings(sys.argv))
