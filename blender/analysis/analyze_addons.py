# The add-ons a file needs (analyze.py's `addons` field), found in its data without running any Python:
# Blender runs with factory settings and `-Y`, so an add-on the file was made with is not registered,
# and its saved data shows up as:
#   - node trees and nodes of an unregistered type (RNA: NodeTreeUndefined / NodeUndefined; the saved
#     type name is read from the file's bytes by blend_dna.py);
#   - ID-property groups (a PointerProperty/CollectionProperty to a PropertyGroup) whose key no registered
#     property claims, on any data block but the UI ones (window managers, workspaces, screens: they do
#     not change a render). Plain number/string properties are left out: users add those by hand too;
#   - a render engine that is not registered (RNA then shows EEVEE; the saved name comes from the bytes).
# Python drivers are not counted: the render runs with `-Y`, so they do not run with or without the
# add-on (AUTOEXEC_DISABLED reports them).
# Each identifier is attributed to a module by searching add-on sources as text (never imported): the
# pack's bundled add-ons first, then the add-ons that ship with Blender. `addons` = the bundled add-ons
# + the modules found + identifiers no add-on here defines. ADDON_REQUIRED (not blocking) says why each
# needed add-on that will not be enabled is needed, and what to do.
import json
import os
import re

import bpy
import idprop

import blend_dna

UI_COLLECTIONS = ('window_managers', 'workspaces', 'screens')
# Keys Blender itself saves, some from older versions whose property no longer exists.
OWN_KEYS = {'_RNA_UI', 'cycles', 'cycles_visibility', 'cycles_curves'}
BUILTIN_ENGINES = {'BLENDER_EEVEE', 'BLENDER_EEVEE_NEXT', 'BLENDER_WORKBENCH', 'BLENDER_WORKBENCH_NEXT'}
MAX_SOURCE_BYTES = 4 * 1024 * 1024  # a bigger .py is data, not an add-on's registration code
MAX_PLACES = 3  # places named per identifier in a warning


def load_config(path):
    """`--addons FILE`: {"bundled": [{"id", "path"}], "selected": [ids that the render enables],
    "refused": the farm runs no bundled add-on}."""
    if not path:
        return {'bundled': [], 'selected': [], 'refused': False}
    with open(path, encoding='utf-8') as f:
        cfg = json.load(f)
    return {'bundled': list(cfg.get('bundled') or []), 'selected': list(cfg.get('selected') or []),
            'refused': bool(cfg.get('refused'))}


def _ids():
    seen = set()  # 5.x's bpy.data.all_ids holds every ID a second time
    for name in dir(bpy.data):
        coll = getattr(bpy.data, name, None)
        if name in UI_COLLECTIONS or not isinstance(coll, bpy.types.bpy_prop_collection):
            continue
        for idb in coll:
            if isinstance(idb, bpy.types.ID) and idb.as_pointer() not in seen and not isinstance(
                    idb, (bpy.types.WindowManager, bpy.types.WorkSpace, bpy.types.Screen)):
                seen.add(idb.as_pointer())
                yield idb
                tree = getattr(idb, 'node_tree', None)  # embedded in materials, worlds, scenes, lights
                if tree is not None and tree.as_pointer() not in seen:
                    seen.add(tree.as_pointer())
                    yield tree


def _id_properties(idb):
    """(key, value) of an ID's ID properties: the user's (keys()) and, from 5.0 on, those bpy.props
    defined, which Blender keeps apart (bl_system_properties_get)."""
    for key in idb.keys():
        yield key, idb[key]
    get = getattr(idb, 'bl_system_properties_get', None)
    group = get() if get is not None else None
    if group is not None:
        for key in group.keys():
            yield key, group[key]


def _is_group(v):
    return isinstance(v, idprop.types.IDPropertyGroup) or (
        isinstance(v, list) and any(isinstance(x, idprop.types.IDPropertyGroup) for x in v))


def _label(idb):
    return "%s '%s'" % (idb.bl_rna.identifier if isinstance(idb, bpy.types.NodeTree) else type(idb).__name__, idb.name)


def find_uses():
    """[(kind, identifier, place)]; `identifier` is None when the file's bytes could not be read (zstd)."""
    uses = []
    trees = []
    for idb in _ids():
        if isinstance(idb, bpy.types.NodeTree):
            trees.append(idb)
        for key, value in _id_properties(idb):
            if key not in OWN_KEYS and key not in idb.bl_rna.properties and _is_group(value):
                uses.append(('property', key, _label(idb)))
    undefined_trees = [t for t in trees if t.bl_idname == 'NodeTreeUndefined']
    undefined_nodes = [(t, n) for t in trees for n in t.nodes if n.bl_idname == 'NodeUndefined']
    dna = None
    try:
        dna = blend_dna.read(bpy.data.filepath) if bpy.data.filepath else None
    except Exception as e:  # a damaged or unusual file: fall back to what RNA shows
        print('blend_dna: %s: %s' % (type(e).__name__, e))
    saved_trees, saved_nodes = {}, {}
    for tree_name, idname, members in (dna or {}).get('trees', []):
        saved_trees.setdefault(tree_name, set()).add(idname)
        for node_name, node_idname in members:
            saved_nodes.setdefault((tree_name, node_name), set()).add(node_idname)
    for t in undefined_trees:
        names = [i for i in saved_trees.get(t.name, ()) if not hasattr(bpy.types, i)] or [None]
        uses += [('node_tree', i, "tree '%s'" % t.name) for i in names]
    for t, n in undefined_nodes:
        names = [i for i in saved_nodes.get((t.name, n.name), ()) if not hasattr(bpy.types, i)] or [None]
        uses += [('node', i, "node '%s' in tree '%s'" % (n.name, t.name)) for i in names]
    # Abstract bases (4.x's HydraRenderEngine) have no bl_idname: only registered engines name one.
    registered = (getattr(c, 'bl_idname', None) for c in _subclasses(bpy.types.RenderEngine))
    engines = BUILTIN_ENGINES | {i for i in registered if i}
    for scene, engine in sorted((dna or {}).get('engines', {}).items()):
        if engine and engine not in engines:
            uses.append(('engine', engine, "scene '%s'" % scene))
    return uses


def _subclasses(cls):
    for c in cls.__subclasses__():
        yield c
        yield from _subclasses(c)


def _pattern(kind, ident):
    q = re.escape(ident)
    if kind == 'property':  # `bpy.types.Scene.NAME = PointerProperty(...)` or setattr(..., 'NAME', ...)
        return re.compile(r'\.%s\s*=(?!=)|setattr\([^,]+,\s*[\'"]%s[\'"]' % (q, q))
    return re.compile(r'bl_idname\s*=\s*[\'"]%s[\'"]' % q)  # node tree, node and engine classes


def _sources(bundled):
    """(module, folder or .py file, bundled?): the pack's add-ons, then Blender's own."""
    for a in bundled:
        yield a['id'], a['path'], True
    import addon_utils
    for base in addon_utils.paths():
        for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            full = os.path.join(base, entry)
            if entry.endswith('.py'):
                yield entry[:-3], full, False
            elif os.path.isfile(os.path.join(full, '__init__.py')):
                yield entry, full, False


def _py_files(path):
    if os.path.isfile(path):
        yield path
        return
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(root, name)


def attribute(uses, bundled):
    """{(kind, identifier): (module, bundled?)} for the identifiers some add-on's source defines."""
    pending = {(k, i): _pattern(k, i) for k, i, _ in uses if i is not None}
    found = {}
    for module, path, is_bundled in _sources(bundled):
        if not pending:
            break
        for py in _py_files(path):
            try:
                if os.path.getsize(py) > MAX_SOURCE_BYTES:
                    continue
                with open(py, encoding='utf-8', errors='replace') as f:
                    text = f.read()
            except OSError:
                continue
            for key, pat in list(pending.items()):
                if key[1] in text and pat.search(text):
                    found[key] = (module, is_bundled)
                    del pending[key]
    return found


def addons_section(scene, res, warn, cfg):
    uses = find_uses()
    found = attribute(uses, cfg['bundled'])
    bundled_ids = {a['id'] for a in cfg['bundled']}
    selected = set(cfg['selected'])
    reasons = {}  # module (None: unknown add-ons) -> [reason]
    names = set(bundled_ids)
    for kind, ident, place in uses:
        module, _ = found.get((kind, ident), (None, False))
        label = {'property': 'property group', 'node_tree': 'node tree type', 'node': 'node type',
                 'engine': 'render engine'}[kind]
        what = '%s %r' % (label, ident) if ident else 'an unregistered %s' % label
        names.add(module or ident or 'unknown %s (%s)' % (label, place))
        reasons.setdefault(module, {}).setdefault(what, []).append(place)
        if kind == 'engine' and place == "scene '%s'" % scene.name:
            res.pop('renderEngine', None)  # RNA showed a fallback engine, not the file's
            warn('UNSUPPORTED_ENGINE', True, 'Render engine %r comes from an add-on and is not supported; use CYCLES, '
                 'BLENDER_EEVEE or BLENDER_WORKBENCH.' % ident)
    res['addons'] = sorted(names)

    def why(module):
        more = lambda places: ', ...' if len(places) > MAX_PLACES else ''  # noqa: E731
        return '; '.join('%s (%s%s)' % (what, ', '.join(places[:MAX_PLACES]), more(places))
                         for what, places in sorted(reasons[module].items()))
    for module in sorted(m for m in reasons if m is not None and m not in selected):
        if module in bundled_ids and cfg.get('refused'):
            warn('ADDON_REQUIRED', False, 'The file holds data of the bundled add-on %s: %s. This farm runs no '
                 'bundled add-on (see ADDON_REFUSED), so that data is ignored when rendering.' % (module, why(module)))
        elif module in bundled_ids:
            warn('ADDON_REQUIRED', False, 'The file holds data of the bundled add-on %s, which is not selected: %s. '
                 'Add it to addonsToUse, or that data is ignored when rendering.' % (module, why(module)))
        else:
            warn('ADDON_REQUIRED', False, "The file holds data of %s, an add-on that comes with Blender but is off "
                 "with factory settings: %s. Add {id: '%s'} to addonsToUse, or that data is ignored when "
                 'rendering.' % (module, why(module), module))
    if None in reasons:
        warn('ADDON_REQUIRED', False, 'The file holds data of add-ons this worker does not have: %s. Bundle them '
             'with the project (the pack manifest\'s `addons`), or that data is ignored when rendering.' % why(None))
