# The compositor section of analyze.py (same folder, imported by it): whether the compositor runs,
# and every top-level File Output node with the files it writes, in the shape the worker's
# expected-outputs.ts reads ({name, label, base_path, format, media_type, slots: [{name, path}]}).
# Two APIs:
#   up to 4.x  scene.node_tree (scene.use_nodes switches it); File Output: base_path, file_slots
#              (layer_slots for multilayer EXR); a slot writes base_path/<slot path><frame>.<ext>.
#   5.x        scene.compositing_node_group (a node group; scene.use_nodes is deprecated and always
#              on); File Output: directory, file_name, file_output_items; an item writes
#              directory/<file_name><item name><frame>.<ext>, a multilayer EXR
#              directory/<file_name><frame>.exr. Blender expands path templates ({blend_name},
#              {scene_name}, {camera_name}, {node_name}, {resolution_x}, {resolution_y}, {fps}) in
#              file names and item names; they are expanded here the same way, so the reported
#              slot paths are the names the files get.
import os
import re

import bpy

from analyze_render import g, media_type

TEMPLATE = re.compile(r'\{\{|\}\}|\{([a-z_]+)(?::(#+)(?:\.(#+))?)?\}')


def tree_of(scene):
    """The compositor node tree (4.x: scene.node_tree; 5.x: scene.compositing_node_group), or None."""
    if hasattr(scene, 'node_tree'):
        return scene.node_tree
    return g(scene, 'compositing_node_group')


def uses_nodes(scene):
    """Whether the scene's compositor tree is switched on (5.x has no switch but the tree itself)."""
    return bool(scene.use_nodes) if hasattr(scene, 'node_tree') else True


def _variables(scene, node):
    r = scene.render
    return {'blend_name': os.path.splitext(os.path.basename(bpy.data.filepath))[0],
            'scene_name': scene.name, 'camera_name': scene.camera.name if scene.camera else '',
            'node_name': node.name, 'resolution_x': r.resolution_x, 'resolution_y': r.resolution_y,
            'fps': r.fps / r.fps_base}


def expand_templates(text, variables):
    """`text` with Blender's path templates expanded; unchanged when one is unknown (Blender then
    writes nothing for it and says 'Invalid path template')."""
    if '{' not in text and '}' not in text:
        return text
    bad = []

    def one(m):
        if m.group(0) in ('{{', '}}'):
            return m.group(0)[0]
        name, whole, frac = m.group(1), m.group(2), m.group(3)
        if name not in variables:
            bad.append(name)
            return m.group(0)
        v = variables[name]
        if whole is None:
            return repr(v) if isinstance(v, float) else str(v)
        if frac is not None:
            return '%0*.*f' % (len(whole) + len(frac) + 1, len(frac), float(v))
        return '%0*d' % (len(whole), int(v))
    out = TEMPLATE.sub(one, text)
    return text if bad else out


def _slots_up_to_4(n):
    if n.format.file_format == 'OPEN_EXR_MULTILAYER':
        return n.base_path, [{'name': s.name, 'path': s.name} for s in n.layer_slots]
    return n.base_path, [{'name': n.inputs[i].name, 'path': s.path} for i, s in enumerate(n.file_slots)]


def _slots_5(scene, n):
    variables = _variables(scene, n)
    file_name = expand_templates(n.file_name, variables)
    directory = n.directory if n.directory.endswith(('/', '\\')) else n.directory + '/'
    if n.format.file_format == 'OPEN_EXR_MULTILAYER':
        # One file per frame; expected-outputs.ts reads its name from the base path's last part.
        return directory + file_name, [{'name': i.name, 'path': i.name} for i in n.file_output_items]
    return directory, [{'name': i.name, 'path': file_name + expand_templates(i.name, variables)}
                       for i in n.file_output_items]


def compositor(scene, res):
    tree = tree_of(scene)
    res['compositionNodeTreeEnabled'] = uses_nodes(scene) and tree is not None
    nodes = list(tree.nodes) if tree is not None else []
    # 5.x has no Composite node: the group's output is the render result.
    res['compositorHasRenderOutputNode'] = any(n.type in ('COMPOSITE', 'GROUP_OUTPUT') for n in nodes)
    outs = []
    for n in nodes:
        if n.type != 'OUTPUT_FILE':
            continue
        base, slots = _slots_up_to_4(n) if hasattr(n, 'file_slots') else _slots_5(scene, n)
        outs.append({'name': n.name, 'label': n.label, 'base_path': base, 'format': n.format.file_format,
                     'media_type': media_type(n.format), 'slots': slots})
    res['compositeOutputNodes'] = outs
    res['haveOutputFileNode'] = bool(outs)
