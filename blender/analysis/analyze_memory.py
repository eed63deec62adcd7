# The memory estimate of analyze.py (same folder, imported by it), before any render: the images
# decoded, the geometry as it renders (subdivision at its highest keyframed level; hair, particle
# instances and baked particle caches: analyze_particles.py) and Cycles' own base, with a band; fills
# res['vramMetadata']. Measured against the peak Blender reports by bench:estimate (bench/RESULTS.md).
import array

import bpy

from action_curves import action_fcurves
from analyze_files import abspath, exists
from analyze_particles import count_particles, instanced_objects


def _image_bytes(img):
    w, h = (img.size[0], img.size[1]) if img.source != 'TILED' else (0, 0)
    per_px = max(1, img.channels or 4) * (4 if img.is_float else 1)
    if img.source == 'TILED':
        return sum(t.size[0] * t.size[1] for t in img.tiles) * per_px
    return w * h * per_px


# The memory model, fitted on Cycles' reported peak on the CPU (Blender 3.4, bench:estimate): a
# scene with nothing in it peaks at 10.5 MB at any resolution (tables, the world, the kernels'
# buffers; the film is tiled); a Suzanne subdivided 3, 4 and 5 times (63 k, 252 k, 1 M triangles)
# added 7.3, 32 and 138 MB: about 100 B per triangle and 64 per vertex, the BVH's build included.
CYCLES_BASE_BYTES = 10.5 * 2 ** 20
# Images: each decoded once, and the largest twice more while it loads (the loader's buffer and its
# conversion): a 1024x1024 byte image alone added 11 MB, a float one or a 2048x2048 byte one 47 MB,
# and eight 1024x1024 ones (two float, 56 MB decoded) 96 MB.
LARGEST_IMAGE_EXTRA = 2
BYTES_PER_TRIANGLE = 100
BYTES_PER_VERTEX = 64
# A UV map Cycles exports only where a shader reads it (an Image Texture): the same Suzanne at level 4
# with an image on it peaked 32 MB higher, about 64 B a triangle (a float2 per corner, packed twice).
BYTES_PER_UV_TRIANGLE = 64
# The band: the fit's residuals on the bench's scenes stay within 30 %; what the model cannot size
# raises the top four times.
BAND = 1.3
UNSIZED_FACTOR = 4


def _animated_max(obj, path, value):
    """The highest value the property at `path` takes: its own, or any keyframe of the object's action
    (levels that grow)."""
    ad = getattr(obj, 'animation_data', None)
    act = ad.action if ad else None
    best = value
    for fc in (action_fcurves(act) if act else []):
        if fc.data_path == path:
            best = max([best] + [kp.co[1] for kp in fc.keyframe_points])
    return int(round(best))


def _object_levels(o, risk, strands, scene):
    """The subdivision levels an object renders with at most (keyframed levels included); notes risks
    and counts hair and instances."""
    levels = 0
    for m in o.modifiers:
        if m.type in ('SUBSURF', 'MULTIRES'):
            risk['hasSubdivision' if m.type == 'SUBSURF' else 'hasMultires'] = True
            if m.show_render:
                levels = max(levels, _animated_max(o, 'modifiers["%s"].render_levels' % m.name, m.render_levels))
        elif m.type == 'DISPLACE':
            risk['hasDisplacement'] = True
        elif m.type == 'NODES':
            risk['hasGeometryNodes'] = True
        elif m.type == 'PARTICLE_SYSTEM':
            risk['hasHairOrParticles'] = True
            if m.show_render:
                count_particles(m.particle_system, scene, strands)
        elif m.type == 'FLUID' and m.fluid_type == 'DOMAIN' and m.domain_settings.domain_type == 'GAS':
            risk['hasVolumes'] = True
    return min(levels, 8)


def _reads_image(mat):
    """Whether a material's shader reads an image (and so the mesh's UV map)."""
    tree = getattr(mat, 'node_tree', None) if mat is not None and getattr(mat, 'use_nodes', False) else None
    return tree is not None and any(n.type == 'TEX_IMAGE' for n in tree.nodes)


def _render_topology(verts, faces, loops, levels):
    """Triangles and vertices a mesh renders with after `levels` of Catmull-Clark.

    Each n-gon becomes n quads, then every quad becomes 4 at each level.
    """
    if levels <= 0:
        return loops - 2 * faces, verts
    quads = loops * 4 ** (levels - 1)
    return 2 * quads, quads


def _texture_stats():
    """The images the file uses: counts by kind, decoded bytes, duplicates, and the largest one's bytes."""
    imgs = [i for i in bpy.data.images if i.users > 0 and i.type in ('IMAGE', 'MULTILAYER', 'UV_TEST')]
    tex = {'imageCount': len(imgs), 'unknownSizeCount': 0, 'packedImageCount': 0, 'generatedImageCount': 0,
           'tiledImageCount': 0, 'sequenceImageCount': 0, 'movieImageCount': 0, 'estimatedBytes': 0}
    groups, largest = {}, 0
    for img in imgs:
        src = img.source
        tex['packedImageCount'] += 1 if img.packed_file else 0
        tex['generatedImageCount'] += 1 if src == 'GENERATED' else 0
        tex['tiledImageCount'] += 1 if src == 'TILED' else 0
        tex['sequenceImageCount'] += 1 if src == 'SEQUENCE' else 0
        tex['movieImageCount'] += 1 if src == 'MOVIE' else 0
        size = _image_bytes(img) if src == 'GENERATED' or img.packed_file or exists(img.filepath, img.library) else 0
        if size == 0:
            tex['unknownSizeCount'] += 1
        tex['estimatedBytes'] += size
        largest = max(largest, size)
        if src in ('FILE', 'TILED') and img.filepath and not img.packed_file:
            key = abspath(img.filepath, img.library) + '|' + img.colorspace_settings.name
            groups.setdefault(key, []).append((img.name, size))
    dups = [{'key': k, 'count': len(v), 'names': [n for n, _ in v], 'estimatedBytes': sum(s for _, s in v)}
            for k, v in groups.items() if len(v) > 1]
    tex['duplicateGroups'] = dups
    tex['duplicateWasteBytes'] = sum(d['estimatedBytes'] - d['estimatedBytes'] / d['count'] for d in dups)
    return tex, largest


def vram_metadata(scene, res):
    """Memory estimate before any render: decoded image sizes and the geometry at render (subdivision
    at its highest keyframed level, hair, instances) on top of Cycles' own base, with a band."""
    tex, largest = _texture_stats()

    risk = dict.fromkeys(('hasSubdivision', 'hasMultires', 'hasDisplacement', 'hasGeometryNodes',
                          'hasHairOrParticles', 'hasVolumes'), False)
    meshes, objs = {}, list(scene.objects)
    strands = {'segments': 0, 'instances': 0, 'bytes': 0}
    adaptive = False
    # Objects that particles instance render through them even when hidden (or outside the scene).
    instanced = {i.name: i for o in objs for m in o.modifiers if m.type == 'PARTICLE_SYSTEM' and m.show_render
                 for i in instanced_objects(m.particle_system.settings)}
    in_scene = {o.name for o in objs}
    for o in objs + [i for name, i in instanced.items() if name not in in_scene]:
        levels = _object_levels(o, risk, strands, scene)
        if o.type == 'CURVES':
            risk['hasHairOrParticles'] = True
        if o.type == 'VOLUME':
            risk['hasVolumes'] = True
        adaptive = adaptive or bool(getattr(getattr(o, 'cycles', None), 'use_adaptive_subdivision', False))
        if o.type == 'MESH' and o.data is not None and (not o.hide_render or o.name in instanced):
            _, had, uv = meshes.get(o.data.name, (None, 0, False))
            reads_uv = any(_reads_image(sl.material) for sl in o.material_slots) and len(o.data.uv_layers) > 0
            meshes[o.data.name] = (o.data, max(levels, had), uv or reads_uv)
            for slot in o.material_slots:
                mat = slot.material
                method = (getattr(mat, 'displacement_method', None)
                          or getattr(getattr(mat, 'cycles', None), 'displacement_method', 'BUMP'))
                if mat and method in ('DISPLACEMENT', 'BOTH'):
                    risk['hasDisplacement'] = True
    geo = {'objectCount': len(objs), 'meshObjectCount': sum(1 for o in objs if o.type == 'MESH'),
           'uniqueMeshCount': len(meshes), 'vertexCount': 0, 'faceCount': 0, 'triangleCount': 0, 'estimatedBytes': 0}
    for mesh, levels, uv in meshes.values():
        loops = array.array('i', [0]) * len(mesh.polygons)
        mesh.polygons.foreach_get('loop_total', loops)
        geo['vertexCount'] += len(mesh.vertices)
        geo['faceCount'] += len(mesh.polygons)
        tris, verts = _render_topology(len(mesh.vertices), len(loops), sum(loops), levels)
        geo['triangleCount'] += tris
        per_triangle = BYTES_PER_TRIANGLE + (BYTES_PER_UV_TRIANGLE if uv else 0)
        geo['estimatedBytes'] += tris * per_triangle + verts * BYTES_PER_VERTEX
    geo['estimatedBytes'] += strands['bytes']
    geo['hairSegmentCount'] = strands['segments']
    geo['particleInstanceCount'] = strands['instances']
    layers = [vl for vl in scene.view_layers if vl.use]
    pass_channels = {'use_pass_combined': 4, 'use_pass_z': 1, 'use_pass_normal': 3, 'use_pass_mist': 1,
                     'use_pass_vector': 4, 'use_pass_position': 3, 'use_pass_uv': 3, 'use_pass_object_index': 1,
                     'use_pass_material_index': 1, 'use_pass_diffuse_color': 3, 'use_pass_diffuse_direct': 3,
                     'use_pass_diffuse_indirect': 3, 'use_pass_glossy_color': 3, 'use_pass_glossy_direct': 3,
                     'use_pass_glossy_indirect': 3, 'use_pass_emit': 3, 'use_pass_environment': 3, 'use_pass_ao': 3,
                     'use_pass_shadow': 3}
    components = sum(n for vl in layers for k, n in pass_channels.items() if getattr(vl, k, False))
    total = CYCLES_BASE_BYTES + tex['estimatedBytes'] + LARGEST_IMAGE_EXTRA * largest + geo['estimatedBytes']
    # Sized by the model: within 30 % either way. What it cannot size from the file (geometry nodes,
    # volumes' grids, adaptive subdivision's dicing, displacement on it) only raises the top of the band.
    unsized = [k for k, on in (('geometry nodes', risk['hasGeometryNodes']), ('volumes', risk['hasVolumes']),
                               ('adaptive subdivision', adaptive),
                               ('images of unknown size', tex['unknownSizeCount'] > 0))
               if on]
    res['vramMetadata'] = {'schemaVersion': 2, 'sceneName': scene.name, 'textures': tex, 'geometry': geo,
                           'riskFeatures': risk,
                           'renderOutput': {'viewLayerCount': len(layers), 'passComponents': components},
                           'estimatedBytes': int(total), 'estimatedLowBytes': int(total / BAND),
                           'estimatedHighBytes': int(total * BAND * (UNSIZED_FACTOR if unsized else 1)),
                           'unsizedFeatures': unsized}
