# Scene analysis, run inside Blender by blender/analysis/analyze-scene.ts:
#   blender -b -Y --factory-startup -noaudio FILE --python analyze.py -- --out RESULT.json [--scene NAME]
#     [--addons FILE]   (the pack's bundled add-ons and the ids the render enables; see analyze_addons.py)
# Writes ONE JSON object: the spec's scene metadata object (shared/api/scene.ts, SceneMetadataShape)
# plus `analysisWarnings`. Every section is wrapped: a failure becomes an ANALYSIS_SECTION_FAILED
# warning and the section's fields are left out, never a traceback. Needs no network; writes only --out.
# Works on Blender 3.4 to 5.x (tested on 3.4, 4.3 and 5.2: test/blender/): attributes that moved
# between versions are read with getattr, the compositor's two APIs in analyze_compositor.py.
#
# Warning codes (`blocking` = validation fails):
#   SCENE_NOT_FOUND (blocking)      --scene names no scene in the file
#   NO_CAMERA (blocking)            the scene has no camera object: Blender cannot render it
#   NO_ACTIVE_CAMERA                cameras exist but none is active: Blender uses the first one
#   UNSUPPORTED_ENGINE (blocking)   engine other than CYCLES / BLENDER_EEVEE(_NEXT) / BLENDER_WORKBENCH
#                                   (also an add-on's engine that is not registered: RNA would show EEVEE)
#   ADDON_REQUIRED                  the file holds data of an add-on the render will not enable, and why
#   NO_VIEW_LAYER_ENABLED (blocking) every view layer has "Use for Rendering" off
#   MISSING_FILES                   external files not found; Blender still renders (magenta textures).
#                                   Not blocking: many files carry stale paths to unused images.
#   MISSING_LIBRARIES (blocking)    linked .blend libraries not found: their objects would be absent
#   MISSING_CACHE                   simulation caches not baked or not found (see analyze_files.py)
#   DENOISER_UNAVAILABLE            denoising is on but this Blender has no such denoiser: renders without
#   FILE_NEWER_THAN_BLENDER         saved by a newer Blender than the one analysing it
#   AUTOEXEC_DISABLED               the file has auto-run scripts or Python drivers; they are not run
#   MOVIE_OUTPUT_FORMAT             a movie output format; renders write PNG frames instead
#   UNSUPPORTED_OUTPUT_FORMAT       an image format outside the API's list; renders write PNG
#   ANALYSIS_SECTION_FAILED         one section of this script failed; its fields are missing
#   PATHS_NOT_REMAPPED              a path the packer moved into the archive (--remaps) could not be set
# With `--remaps FILE` (see ../remap/remap_paths.py) the packer's path remaps are applied first and
# `RB_REMAP {json}` is printed with what was remapped.
import argparse
import json
import os
import sys
import traceback

import bpy

sys.dont_write_bytecode = True  # write nothing but --out, not even a .pyc beside this script
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The path remaps are their own contract in blender/remap/ (render setup applies them too).
sys.path.insert(1, os.path.join(os.path.dirname(HERE), 'remap'))
from action_curves import action_fcurves  # noqa: E402  (sibling module: F-curves on 3.4 to 5.x)
import analyze_addons  # noqa: E402  (sibling module: the add-ons the file's data needs)
from analyze_compositor import compositor  # noqa: E402  (sibling module: 4.x and 5.x compositor APIs)
import analyze_files  # noqa: E402  (sibling module: missing files, caches, auto-run scripts)
import analyze_memory  # noqa: E402  (sibling module: the memory estimate)
import analyze_steps  # noqa: E402  (sibling module: steps of animated integer properties)
from analyze_render import g, render_settings  # noqa: E402  (sibling module: render settings)
import remap_paths  # noqa: E402  (../remap: the packer's path remaps)


def parse_args(argv):
    """--out, --scene, --remaps, --addons after `--`; anything else is left alone."""
    parser = argparse.ArgumentParser(prog='analyze.py', add_help=False)
    for name in ('--out', '--scene', '--remaps', '--addons'):
        parser.add_argument(name)
    known, _ = parser.parse_known_args(argv[argv.index('--') + 1:] if '--' in argv else [])
    return known.out, known.scene, known.remaps, known.addons


def nums(v):
    return [float(x) for x in v]


def denoiser_check(scene, res, warn):
    """Debian's Cycles has no OpenImageDenoise; OptiX needs an NVIDIA device. Denoising is then turned off."""
    if not res.get('denoisingEnabled'):
        return
    try:
        import _cycles
        has_oidn = bool(g(_cycles, 'with_openimagedenoise', False))
        types = _cycles.get_device_types()
        has_optix = bool(types[1]) if len(types) > 1 else False
    except Exception:
        has_oidn, has_optix = False, False
    # A build with no denoiser at all lists no enum items, so the file's choice reads back as unset.
    denoiser = res.get('denoiserType')
    # Cycles falls back from OptiX to OpenImageDenoise when it has the latter.
    missing = not has_oidn if denoiser != 'OPTIX' else not (has_optix or has_oidn)
    if denoiser is None or missing:
        warn('DENOISER_UNAVAILABLE', False, 'Denoising (%s) is on but this Blender build cannot run that denoiser; '
             'frames render without denoising.' % (denoiser or 'no denoiser in this build'))


def scene_lists(scene, active, res, warn):
    res['scenes'] = [{
        'name': s.name, 'is_active': s == active, 'world': s.world.name if s.world else None,
        'unit_settings': {'system': s.unit_settings.system, 'scale_length': float(s.unit_settings.scale_length)},
        'gravity': nums(s.gravity)} for s in bpy.data.scenes]
    res['viewLayers'] = []
    active_vl = g(bpy.context, 'view_layer') if scene == bpy.context.scene else None
    for vl in scene.view_layers:
        res['viewLayers'].append({'name': vl.name, 'use': bool(vl.use),
                                  'isActive': vl == active_vl if active_vl else vl == scene.view_layers[0]})
    res['activeViewLayer'] = active_vl.name if active_vl else scene.view_layers[0].name
    if not any(vl.use for vl in scene.view_layers):
        warn('NO_VIEW_LAYER_ENABLED', True, 'No view layer of scene %r is enabled for rendering.' % scene.name)
    res['renderLayersAndPasses'] = [{'name': vl.name, 'use_pass_combined': bool(vl.use_pass_combined),
                                     'use_pass_z': bool(vl.use_pass_z), 'use_pass_normal': bool(vl.use_pass_normal)}
                                    for vl in scene.view_layers]


def cameras(scene, res, warn):
    res['cameras'] = [{
        'name': c.name, 'type': c.type, 'lens': float(c.lens), 'clip_start': float(c.clip_start),
        'clip_end': float(c.clip_end), 'sensor_width': float(c.sensor_width), 'sensor_height': float(c.sensor_height),
        'shift_x': float(c.shift_x), 'shift_y': float(c.shift_y),
        'dof': {'use_dof': bool(c.dof.use_dof), 'focus_distance': float(c.dof.focus_distance),
                'aperture_fstop': float(c.dof.aperture_fstop)}} for c in bpy.data.cameras]
    objs = [o for o in scene.objects if o.type == 'CAMERA']
    res['sceneCameras'] = [{'objectName': o.name, 'dataName': o.data.name, 'type': o.data.type,
                            'isSavedActive': scene.camera == o} for o in objs]
    if not objs:
        warn('NO_CAMERA', True, 'Scene %r has no camera; add one before rendering.' % scene.name)
    elif scene.camera is None:
        warn('NO_ACTIVE_CAMERA', False,
             'Scene %r has no active camera; Blender renders with %r.' % (scene.name, objs[0].name))


def look(scene, res):
    vs, ds = scene.view_settings, scene.display_settings
    res['colorManagementSettings'] = {'display_device': ds.display_device, 'view_transform': vs.view_transform,
                                      'look': vs.look, 'exposure': float(vs.exposure), 'gamma': float(vs.gamma)}
    res['lights'] = [{'name': li.name, 'type': li.type, 'color': nums(li.color), 'energy': float(li.energy),
                      'shadow_soft_size': float(g(li, 'shadow_soft_size', 0.0))} for li in bpy.data.lights]
    w = scene.world
    res['worldSettings'] = None if w is None else {
        'name': w.name, 'ambient_color': nums(g(w, 'ambient_color', None) or w.color),
        'mist_settings': {'use_mist': bool(g(w.mist_settings, 'use_mist', False)),
                          'start': float(w.mist_settings.start), 'depth': float(w.mist_settings.depth),
                          'falloff': w.mist_settings.falloff}}


def stereo(scene, res):
    out = []
    for s in [scene] + [x for x in bpy.data.scenes if x != scene]:
        r, ims = s.render, s.render.image_settings
        f = ims.stereo_3d_format
        out.append({
            'scene_name': s.name, 'use_multiview': bool(r.use_multiview), 'views_format': r.views_format,
            'views_output': ims.views_format,
            'views': [{'name': v.name, 'use': bool(v.use), 'file_suffix': v.file_suffix,
                       'camera_suffix': v.camera_suffix} for v in r.views],
            'stereo_3d_format': {'display_mode': f.display_mode, 'anaglyph_type': f.anaglyph_type,
                                 'interlace_type': f.interlace_type, 'use_interlace_swap': bool(f.use_interlace_swap),
                                 'use_sidebyside_crosseyed': bool(f.use_sidebyside_crosseyed)}})
    res['stereoscopySettings'] = out


def data_lists(res, warn):
    res['animations'] = [{'name': a.name, 'frame_range': nums(a.frame_range),
                          'fcurves': [{'data_path': fc.data_path, 'index': fc.array_index} for fc in action_fcurves(a)]}
                         for a in bpy.data.actions]
    res['linkedData'] = [{'name': lib.name, 'path': lib.filepath} for lib in bpy.data.libraries]


def file_info(res, warn):
    path = bpy.data.filepath
    res['fileName'] = os.path.basename(path)
    res['pathToFileForRender'] = os.path.basename(path)
    res['fileSize'] = os.path.getsize(path) if path and os.path.exists(path) else 0
    fv = tuple(bpy.data.version)
    res['hostFileVersion'] = list(fv)
    # The version the render should use: the file's own major.minor (the worker picks the closest build).
    res['hostVersionForRender'] = '%d.%d' % (fv[0], fv[1])
    if fv[:2] > tuple(bpy.app.version)[:2]:
        warn('FILE_NEWER_THAN_BLENDER', False, 'The file was saved with Blender %d.%d, newer than the %s that '
             'analysed it; newer features may be missing from this analysis.' % (fv[0], fv[1], bpy.app.version_string))


def remap(path, warn):
    result = remap_paths.apply_remaps(*remap_paths.load(path))
    print('RB_REMAP ' + json.dumps(remap_paths.summary(result)), flush=True)
    problem = remap_paths.describe_failures(result)
    if problem:
        warn('PATHS_NOT_REMAPPED', False, problem)


def main():
    out_path, scene_name, remaps_path, addons_path = parse_args(sys.argv)
    res, warnings = {}, []

    def warn(code, blocking, message):
        warnings.append({'code': code, 'blocking': bool(blocking), 'message': message})

    def section(name, fn, *args):
        try:
            fn(*args)
        except Exception as e:  # one odd datablock must not lose the whole analysis
            traceback.print_exc()
            warn('ANALYSIS_SECTION_FAILED', False, 'Analysis of %s failed (%s: %s); those fields are missing.'
                 % (name, type(e).__name__, e))

    if remaps_path:  # before anything reads a path
        section('path remap', remap, remaps_path, warn)
    active = bpy.context.scene
    scene = active
    if scene_name:
        scene = bpy.data.scenes.get(scene_name)
        if scene is None:
            warn('SCENE_NOT_FOUND', True, 'Scene %r is not in the file; scenes: %s.'
                 % (scene_name, ', '.join(s.name for s in bpy.data.scenes)))
            scene = active
    section('file', file_info, res, warn)
    section('render settings', render_settings, scene, res, warn)
    section('denoiser', denoiser_check, scene, res, warn)
    section('compositor', compositor, scene, res)
    section('scenes and view layers', scene_lists, scene, active, res, warn)
    section('cameras', cameras, scene, res, warn)
    section('colour, lights and world', look, scene, res)
    section('stereoscopy', stereo, scene, res)
    section('data', data_lists, res, warn)
    section('integer steps', analyze_steps.integer_steps, scene, res, action_fcurves)
    section('add-ons', lambda: analyze_addons.addons_section(scene, res, warn, analyze_addons.load_config(addons_path)))
    section('missing files', analyze_files.missing_files, res, warn)
    section('caches', analyze_files.missing_caches, scene, res, warn)
    section('scripts', analyze_files.autoexec_check, warn)
    section('memory estimate', analyze_memory.vram_metadata, scene, res)
    res['analysisWarnings'] = warnings
    text = json.dumps(analyze_files.clean(res))
    if out_path:
        with open(out_path, 'w', encoding='utf-8') as f:
            f.write(text)
    else:
        print(text)


main()
