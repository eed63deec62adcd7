# Helpers of render_setup.py (imported from its folder): warnings and errors in the format the
# worker parses (RB_WARNING / RB_SETUP_ERROR), and everything about output files: the camera
# output format, and File Output nodes redirected into the attempt's composite folder.
import os
import posixpath
import re
import unicodedata

import bpy

MOVIE_FORMATS = ('FFMPEG', 'AVI_JPEG', 'AVI_RAW')


class SetupError(Exception):
    pass


WARNINGS = []


def warn(msg):
    WARNINGS.append(msg)
    print('RB_WARNING: ' + msg, flush=True)


def fail(msg):
    print('RB_SETUP_ERROR: ' + msg, flush=True)
    raise SetupError(msg)


def enum_values(obj, attr):
    """Values a (possibly dynamic) enum accepts: Blender lists them when given a bad one."""
    try:
        setattr(obj, attr, '\x01not-a-value')
    except TypeError as e:
        m = re.search(r'not found in \((.*)\)\s*$', str(e))
        return re.findall(r"'((?:[^'\\]|\\.)*)'", m.group(1)) if m else []
    return []


def safe_segment(name):
    """Same as safeSegment in shared/safe-segment.ts (names are ASCII after the replacement)."""
    s = re.sub(r'[^A-Za-z0-9._ -]', '_', unicodedata.normalize('NFC', name)).strip(' ')
    if not re.match(r'[A-Za-z0-9]', s):
        s = 'f' + s
    if len(s) > 200:
        ext = posixpath.splitext(s)[1][:16]
        s = s[:200 - len(ext)] + ext
    return s


def set_opt(obj, attr, value, what):
    """Sets an optional setting; a value the build or format refuses becomes a warning."""
    if value is None:
        return
    if not hasattr(obj, attr):
        warn('%s: not available in Blender %s, left unchanged' % (what, bpy.app.version_string))
        return
    try:
        setattr(obj, attr, value)
    except (TypeError, ValueError, AttributeError) as e:
        warn('%s = %r refused (%s), left unchanged' % (what, value, e))


def set_output(scene, out):
    im = scene.render.image_settings
    fmt = (out or {}).get('format')
    if im.file_format in MOVIE_FORMATS and (not fmt or fmt in MOVIE_FORMATS):
        fmt = 'PNG'  # renders write image sequences; the API normalises movies before this point
        warn('movie output format %s replaced by PNG frames' % im.file_format)
    if fmt in MOVIE_FORMATS:
        warn('movie output format %s replaced by PNG frames' % fmt)
        fmt = 'PNG'
    if fmt:
        try:
            im.file_format = fmt
        except TypeError:
            fail('output format %r is not available in Blender %s' % (fmt, bpy.app.version_string))
    out = out or {}
    for key, attr in (('colorMode', 'color_mode'), ('colorDepth', 'color_depth'), ('exrCodec', 'exr_codec'),
                      ('tiffCodec', 'tiff_codec')):
        set_opt(im, attr, out.get(key), 'output ' + attr)
    for key in ('compression', 'quality'):
        set_opt(im, key, None if out.get(key) is None else int(out[key]), 'output ' + key)
    r = scene.render
    # The names the worker expects: extension always appended, every frame rewritten, no placeholders.
    r.use_file_extension = True
    r.use_overwrite = True
    r.use_placeholder = False


def safe_slot_path(path):
    """A slot path that stays inside its base folder: no absolute path, no `..` parts."""
    parts = [p for p in path.replace('\\', '/').split('/') if p not in ('', '.', '..')]
    clean = '/'.join(parts)
    if path.endswith('/') and clean:
        clean += '/'
    return clean


def compositor_tree(scene):
    """The scene's compositor node tree: `scene.node_tree` up to 4.x, the node group
    `scene.compositing_node_group` from 5.0 on. None when the scene has none."""
    if hasattr(scene, 'node_tree'):
        return scene.node_tree
    return getattr(scene, 'compositing_node_group', None)


def redirect_file_outputs(scene, composite_dir, folders):
    """Points every File Output node (also inside node groups) into composite_dir/<folder>/."""
    tree = compositor_tree(scene)
    if tree is None:
        return []
    if not composite_dir or not os.path.isabs(composite_dir):
        fail('settings.compositeDir must be an absolute path, got %r' % composite_dir)
    taken, done, seen_trees = set(), [], set()

    def unique(want):
        name, i = want, 2
        while name.lower() in taken:
            name = '%s-%d' % (want, i)
            i += 1
        taken.add(name.lower())
        return name

    # The worker's names for top-level nodes first, so they are never renamed by a later clash.
    for name in (folders or {}).values():
        taken.add(name.lower())

    def walk(t, prefix):
        if t.as_pointer() in seen_trees:
            return
        seen_trees.add(t.as_pointer())
        for n in t.nodes:
            if n.type == 'GROUP' and getattr(n, 'node_tree', None) is not None:
                walk(n.node_tree, prefix + [safe_segment(n.name)])
            elif n.type == 'OUTPUT_FILE':
                if not prefix and (folders or {}).get(n.name):
                    folder = folders[n.name]
                else:
                    folder = unique('/'.join(['groups'] + prefix + [safe_segment(n.name)]) if prefix
                                    else safe_segment(n.name))
                base = redirect_node(n, os.path.join(composite_dir, folder))
                done.append({'name': n.name, 'folder': folder, 'basePath': base})

    walk(tree, [])
    return done


def _image_format(n):
    """Movie formats become PNG (5.x: the format's media type first, then the file format)."""
    fmt = n.format.file_format
    if fmt not in MOVIE_FORMATS and getattr(n.format, 'media_type', 'IMAGE') != 'VIDEO':
        return
    if hasattr(n.format, 'media_type'):
        n.format.media_type = 'IMAGE'
    n.format.file_format = 'PNG'
    warn('File Output node %r: movie format %s replaced by PNG' % (n.name, fmt))


def redirect_node(n, folder):
    """Points one File Output node at `folder`; returns its new base path (as analyze.py reports it)."""
    _image_format(n)
    if hasattr(n, 'use_file_extension'):
        n.use_file_extension = True  # the names the worker expects carry the extension
    if hasattr(n, 'file_slots'):
        return _redirect_slots(n, folder)
    return _redirect_items(n, folder)


def _redirect_slots(n, folder):
    """Blender up to 4.x: `base_path` and `file_slots` (`layer_slots` for multilayer EXR)."""
    if n.format.file_format == 'OPEN_EXR_MULTILAYER':
        # One file per frame named after the last part of the base path (see expected-outputs.ts).
        n.base_path = os.path.join(folder, n.base_path[n.base_path.rfind('/') + 1:])
        return n.base_path
    n.base_path = folder + '/'
    for slot in n.file_slots:
        clean = safe_slot_path(slot.path)
        if clean != slot.path:
            warn('File Output node %r: slot path %r kept inside its folder as %r' % (n.name, slot.path, clean))
            slot.path = clean
    return n.base_path


def _redirect_items(n, folder):
    """Blender 5.x: `directory`, `file_name` and `file_output_items`. A file is written as
    directory/<file_name><item name><frame>.<ext> (multilayer EXR: directory/<file_name><frame>.exr);
    Blender expands path templates ({blend_name}, {scene_name}...) in the names itself."""
    n.directory = folder + '/'
    if n.format.file_format == 'OPEN_EXR_MULTILAYER':
        name = n.file_name.replace('\\', '/')
        last = name[name.rfind('/') + 1:]
        if last != n.file_name:
            warn('File Output node %r: file name %r kept inside its folder as %r' % (n.name, n.file_name, last))
            n.file_name = last
        return os.path.join(folder, n.file_name)
    paths = [n.file_name + item.name for item in n.file_output_items]
    clean = [safe_slot_path(p) for p in paths]
    if clean != paths:
        # The file name is shared by every item: fold it into each item's name, made safe.
        warn('File Output node %r: file names %s kept inside its folder as %s' % (n.name, paths, clean))
        n.file_name = ''
        for item, name in zip(n.file_output_items, clean):
            item.name = name
    return n.directory
