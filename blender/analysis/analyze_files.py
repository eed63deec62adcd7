# Helpers of analyze.py (same folder, imported by it): missing external files, simulation caches
# and auto-run scripts (the memory estimate is analyze_memory.py's). Each public function fills `res` and calls
# warn(code, blocking, message); analyze.py wraps every call, so they may raise on odd data.
import math
import os
import re
import sys

import bpy

# The add-on's module of Blender's own files (host-addon/renderbridge beside blender/, in the
# source tree and in dist/): one rule for the collector and the analysis.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(_ROOT, 'host-addon', 'renderbridge'))
from blender_own import bundled_asset, install_roots  # noqa: E402

UDIM = re.compile(r'<UDIM>|<UVTILE>')


def clean(v):
    """JSON-safe copy: non-finite floats (which JSON cannot carry) become None."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [clean(x) for x in v]
    return v


def abspath(path, lib=None):
    return os.path.normpath(bpy.path.abspath(path, library=lib))


def exists(path, lib=None):
    """True when the path, or its Windows-style twin with `\\` read as `/`, exists."""
    if os.path.exists(abspath(path, lib)):
        return True
    return '\\' in path and os.path.exists(abspath(path.replace('\\', '/'), lib))


INSTALL_ROOTS = install_roots()


def _under(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def blender_own(path, lib=None):
    """True for a file of a Blender installation, not of the user: one under this build's own folders,
    or a bundled asset library written with another installation's path (the machine that saved the
    file). Such files are never missing user files, nor files to pack."""
    if not path:
        return False
    full = abspath(path, lib)
    if any(_under(full, r) for r in INSTALL_ROOTS):
        return True
    return bundled_asset(path, INSTALL_ROOTS)


def _library_own(lib):
    return lib is not None and blender_own(lib.filepath, lib.parent)


def _external_paths():
    """(kind, datablock name, raw path, library) of every external file the file refers to. Packed
    files are skipped, and so are Blender's own (blender_own), with everything their libraries hold."""
    for item in _all_external_paths():
        kind, _name, path, lib = item
        if _library_own(lib) or blender_own(path, lib):
            continue
        yield item


def _all_external_paths():
    for img in bpy.data.images:
        if img.source in ('FILE', 'SEQUENCE', 'MOVIE', 'TILED') and not img.packed_file and img.filepath:
            if img.source == 'TILED' and UDIM.search(img.filepath):
                for t in img.tiles:
                    yield 'Image', img.name, UDIM.sub(str(t.number), img.filepath), img.library
            else:
                yield 'Image', img.name, img.filepath, img.library
    for lib in bpy.data.libraries:
        if not lib.packed_file:
            yield 'Library', lib.name, lib.filepath, lib.parent
    for font in bpy.data.fonts:
        if font.filepath and font.filepath != '<builtin>' and not font.packed_file:
            yield 'Font', font.name, font.filepath, font.library
    for snd in bpy.data.sounds:
        if snd.filepath and not snd.packed_file:
            yield 'Sound', snd.name, snd.filepath, snd.library
    for clip in bpy.data.movieclips:
        yield 'MovieClip', clip.name, clip.filepath, clip.library
    for cf in bpy.data.cache_files:
        yield 'CacheFile', cf.name, cf.filepath, cf.library
    for vol in getattr(bpy.data, 'volumes', []):
        if vol.filepath and not vol.packed_file:
            yield 'Volume', vol.name, vol.filepath, vol.library
    for txt in bpy.data.texts:
        if txt.filepath and not txt.is_in_memory:
            yield 'Text', txt.name, txt.filepath, txt.library


def missing_files(res, warn):
    """Missing external files; `missingFiles` entries are [kind, datablock name, path as stored]."""
    missing, report, seen = [], [], set()
    for kind, name, path, lib in _external_paths():
        if not path or exists(path, lib):
            continue
        key = (kind, name, path)
        if key in seen:
            continue
        seen.add(key)
        missing.append([kind, name, path])
        report.append("%s '%s': path '%s' not found" % (kind, name, abspath(path, lib)))
    # Anything else Blender knows about (modifier files, strips) that the loop above did not name.
    named = {abspath(p[2]) for p in missing}
    try:
        for p in bpy.utils.blend_paths(absolute=True, packed=False):
            ap = os.path.normpath(p)
            # Folders are caches (5.x lists every point cache's default blendcache_ folder, baked
            # or not): missing_caches judges those.
            if p.endswith(('/', '\\')):
                continue
            if ap not in named and not UDIM.search(p) and not exists(p) and not blender_own(p):
                named.add(ap)
                missing.append(['Other', os.path.basename(ap), p])
                report.append("Path '%s' not found" % ap)
    except TypeError:  # very old signature without `packed`
        pass
    res['missingFiles'] = missing
    res['hostMissingFilesReport'] = report
    libs = [m for m in missing if m[0] == 'Library']
    rest = [m for m in missing if m[0] != 'Library']
    if rest:
        names = ', '.join('%s %s' % (m[0], m[1]) for m in rest[:10])
        names += ' and %d more' % (len(rest) - 10) if len(rest) > 10 else ''
        warn('MISSING_FILES', False, '%d external file(s) not found (%s); they render as missing (e.g. magenta '
             'textures). Pack them or include them in the archive.' % (len(rest), names))
    if libs:
        warn('MISSING_LIBRARIES', True, 'Linked librar%s not found: %s; objects linked from them would be absent. '
             'Include them in the archive.' % ('y' if len(libs) == 1 else 'ies', ', '.join(m[2] for m in libs)))


def _cache_issue(pc, scene, res, kind, obj, mod, label):
    """Records a point cache that would be simulated at render time (unbaked) or whose baked disk files are gone."""
    if pc is None:
        return
    issue = None
    if not pc.is_baked:
        issue = '%s is not baked: frames rendered in chunks or out of order would simulate it from a different ' \
            'start and differ.' % label
    elif pc.use_disk_cache:
        if pc.use_external:
            folder = pc.filepath
        else:  # Blender's default: blendcache_<file name> beside the .blend
            folder = '//blendcache_' + os.path.splitext(os.path.basename(bpy.data.filepath))[0]
        if not os.path.isdir(abspath(folder)):
            issue = '%s is baked to disk but its cache folder %s is missing.' % (label, folder)
    if issue:
        res.append({'type': kind, 'sceneName': scene.name, 'issueDescription': issue,
                    'objectName': obj.name if obj else '', 'objectModifierName': mod.name if mod else ''})


def missing_caches(scene, res, warn):
    out = []
    for obj in scene.objects:
        for mod in obj.modifiers:
            t = mod.type
            if t == 'CLOTH':
                _cache_issue(mod.point_cache, scene, out, 'CLOTH', obj, mod, 'Cloth')
            elif t == 'SOFT_BODY':
                _cache_issue(mod.point_cache, scene, out, 'SOFT_BODY', obj, mod, 'Soft body')
            elif t == 'DYNAMIC_PAINT' and mod.canvas_settings:
                for surf in mod.canvas_settings.canvas_surfaces:
                    if surf.surface_format == 'VERTEX':
                        _cache_issue(surf.point_cache, scene, out, 'DYNAMIC_PAINT', obj, mod, 'Dynamic paint')
            elif t == 'FLUID' and mod.fluid_type == 'DOMAIN':
                d = mod.domain_settings
                if not os.path.isdir(abspath(d.cache_directory)):
                    out.append({'type': 'FLUID', 'sceneName': scene.name, 'objectName': obj.name,
                                'objectModifierName': mod.name,
                                'issueDescription': 'Fluid cache folder %s is missing: bake the simulation and include '
                                                    'the cache.' % d.cache_directory})
            elif t == 'MESH_SEQUENCE_CACHE' and mod.cache_file and not os.path.exists(abspath(mod.cache_file.filepath)):
                out.append({'type': 'ALEMBIC', 'sceneName': scene.name, 'objectName': obj.name,
                            'objectModifierName': mod.name,
                            'issueDescription': 'Cache file %s is missing.' % mod.cache_file.filepath})
            elif t == 'PARTICLE_SYSTEM':
                ps = mod.particle_system
                hair = ps.settings.type == 'HAIR'
                if not hair:
                    _cache_issue(ps.point_cache, scene, out, 'PARTICLES', obj, mod, 'Particle system %s' % ps.name)
                elif ps.use_hair_dynamics:
                    _cache_issue(ps.point_cache, scene, out, 'HAIR', obj, mod, 'Hair dynamics %s' % ps.name)
    rbw = scene.rigidbody_world
    if rbw and rbw.enabled and rbw.collection and len(rbw.collection.objects):
        _cache_issue(rbw.point_cache, scene, out, 'RIGID_BODY', None, None, 'Rigid body world')
    res['missingCaches'] = out
    if out:
        warn('MISSING_CACHE', False, '%d simulation cache(s) missing or not baked: %s' % (len(out), ' '.join(
            c['issueDescription'] for c in out[:5])))


def autoexec_check(warn):
    """Auto-run scripts never run on a worker (`-Y`); say so, since the file may rely on them."""
    texts = [t.name for t in bpy.data.texts if t.use_module]
    drivers = 0
    ids = [idb for name in ('objects', 'meshes', 'materials', 'scenes', 'cameras', 'lights', 'worlds', 'shape_keys',
                            'node_groups', 'textures', 'curves', 'armatures')
           for idb in getattr(bpy.data, name, [])]
    # Node trees embedded in materials, worlds and scenes carry their own drivers.
    ids += [t for t in (getattr(i, 'node_tree', None) for i in ids) if t is not None]
    for idb in ids:
        ad = getattr(idb, 'animation_data', None)
        for fc in (ad.drivers if ad else []):
            if fc.driver.type == 'SCRIPTED' and not fc.driver.is_simple_expression:
                drivers += 1
    if texts or drivers:
        warn('AUTOEXEC_DISABLED', False, 'The file has %d auto-run script(s)%s and %d Python driver(s); they are not '
             'run on the render farm, so results that depend on them will differ.'
             % (len(texts), ' (%s)' % ', '.join(texts) if texts else '', drivers))
