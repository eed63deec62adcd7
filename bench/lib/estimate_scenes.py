# The scenes of bench:estimate, each with a cost that changes along its timeline. Usage:
#   blender -b --factory-startup -noaudio --python estimate_scenes.py -- OUT.blend SCENE
# SCENE is one of (FRAMES, the job's length, comes from estimate-scenes.ts):
#   flythrough  Cycles: the camera starts on an empty sky and flies into a cluster of glass
#               monkeys (transmission, many bounces): frames get dearer as it comes closer.
#   subdivision Cycles: a Subdivision modifier whose levels are keyframed 0 to 5 (the top held over
#               the last fifth), so both the frame time and the memory grow (the analysis reads
#               frame 1's level 0).
#   textures    Cycles: eight 1024x1024 generated images (float ones among them) on planes that
#               slide into view one after another.
#   eevee       EEVEE: a Suzanne whose subdivision grows, soft shadows, bloom.
#   particles   Cycles: a baked particle cache (emission over the first five sixths), each
#               particle an icosphere instance: the cost grows with the particles born.
#   template    Blender's own Sculpting template (its startup.blend, as shipped), rendered with
#               Cycles, its camera dollying towards the sphere.
# Every scene renders on the CPU, without denoising, to PNG; the bench sets resolution and samples.
import math
import os
import sys

import bpy

# The fixtures' shared helpers (tiny_render): test/fixtures/blend/_common.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'test', 'fixtures', 'blend'))
import _common  # noqa: E402


def args():
    rest = sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else []
    if len(rest) < 3:
        raise SystemExit('usage: blender -b --python estimate_scenes.py -- OUT.blend SCENE FRAMES')
    return rest[0], rest[1], int(rest[2])


def cycles(scene, frames):
    _common.tiny_render(scene, frames=frames, samples=16)


def material(name, **inputs):
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes['Principled BSDF']
    for k, v in inputs.items():
        bsdf.inputs[k].default_value = v
    return mat


def clear(scene):
    for o in list(scene.objects):
        if o.type != 'CAMERA':
            bpy.data.objects.remove(o)


def sun(scene):
    data = bpy.data.lights.new('Sun', 'SUN')
    data.energy = 3
    obj = bpy.data.objects.new('Sun', data)
    obj.rotation_euler = (0.6, 0.2, 0.5)
    scene.collection.objects.link(obj)


def camera_path(cam, start, end, frames, target=None):
    cam.location = start
    cam.keyframe_insert('location', frame=frames[0])
    cam.location = end
    cam.keyframe_insert('location', frame=frames[1])
    if target is not None:
        c = cam.constraints.new('TRACK_TO')
        c.target = target


def flythrough(scene, n):
    cycles(scene, (1, n))
    scene.cycles.max_bounces = 16
    scene.cycles.transmission_bounces = 16
    scene.cycles.glossy_bounces = 8
    clear(scene)
    sun(scene)
    glass = material('Glass', **{'Transmission': 1.0, 'Roughness': 0.05, 'IOR': 1.45})
    for i in range(12):
        a = i * 2.4
        r = 1 + i * 0.25
        bpy.ops.mesh.primitive_monkey_add(location=(math.cos(a) * r, 40 + math.sin(a) * r, (i % 3) - 1))
        m = bpy.context.object
        m.modifiers.new('Subdivision', 'SUBSURF').render_levels = 2
        m.data.materials.append(glass)
    target = bpy.data.objects.new('Target', None)
    target.location = (0, 40, 0)
    scene.collection.objects.link(target)
    cam = scene.camera
    cam.constraints.clear()
    # Looking away from the cluster at first (an empty sky), turning towards it and closing in.
    cam.rotation_mode = 'XYZ'
    cam.location = (0, -20, 30)
    cam.rotation_euler = (0.2, 0, math.pi)
    cam.keyframe_insert('location', frame=1)
    cam.keyframe_insert('rotation_euler', frame=1)
    cam.location = (0, 30, 3)
    cam.rotation_euler = (math.radians(90), 0, 0)
    cam.keyframe_insert('location', frame=n)
    cam.keyframe_insert('rotation_euler', frame=n)


def growing_monkey(scene, n, levels):
    """A Suzanne whose Subdivision levels are keyframed from levels[0] at frame 1 to levels[1] at four
    fifths of the shot, held to the end: an integer level keyframed at the last frame reaches its top
    only there (Blender truncates), on the one frame the estimate samples and the render does not
    render again, so the render's own peak never saw it."""
    clear(scene)
    sun(scene)
    bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 0))
    m = bpy.context.object
    mod = m.modifiers.new('Subdivision', 'SUBSURF')
    for f, level in ((1, levels[0]), (n * 4 // 5, levels[1])):
        mod.levels = mod.render_levels = level
        m.keyframe_insert('modifiers["Subdivision"].render_levels', frame=f)
        m.keyframe_insert('modifiers["Subdivision"].levels', frame=f)
    scene.frame_set(1)
    camera_path(scene.camera, (4, -4, 3), (3, -3, 2), (1, n), m)
    return m


def subdivision(scene, n):
    cycles(scene, (1, n))
    m = growing_monkey(scene, n, (0, 5))
    m.data.materials.append(material('Clay', **{'Roughness': 0.5}))


def textures(scene, n):
    cycles(scene, (1, n))
    clear(scene)
    sun(scene)
    for i in range(8):
        img = bpy.data.images.new('Tex%d' % i, 1024, 1024, float_buffer=(i % 4 == 0))
        img.generated_type = 'COLOR_GRID' if i % 2 else 'UV_GRID'
        mat = bpy.data.materials.new('Tex%d' % i)
        mat.use_nodes = True
        tex = mat.node_tree.nodes.new('ShaderNodeTexImage')
        tex.image = img
        mat.node_tree.links.new(tex.outputs['Color'], mat.node_tree.nodes['Principled BSDF'].inputs['Base Color'])
        bpy.ops.mesh.primitive_plane_add(size=2, location=(i * 2.2, 0, 0), rotation=(math.radians(90), 0, 0))
        bpy.context.object.data.materials.append(mat)
    cam = scene.camera
    cam.constraints.clear()
    cam.rotation_euler = (math.radians(90), 0, 0)
    camera_path(cam, (0, -4, 0), (15.4, -6, 0), (1, n))


def eevee(scene, n):
    scene.render.engine = 'BLENDER_EEVEE'
    scene.eevee.taa_render_samples = 4
    scene.eevee.use_soft_shadows = True
    scene.eevee.use_bloom = True
    scene.render.resolution_x, scene.render.resolution_y = 64, 48
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = 'PNG'
    scene.frame_start, scene.frame_end = 1, n
    growing_monkey(scene, n, (1, 4))


def particles(scene, n):
    cycles(scene, (1, n))
    clear(scene)
    sun(scene)
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.08, location=(0, 0, -20))
    ball = bpy.context.object
    ball.data.materials.append(material('Ball', **{'Metallic': 1.0, 'Roughness': 0.1}))
    bpy.ops.mesh.primitive_plane_add(size=4, location=(0, 0, 3))
    emitter = bpy.context.object
    emitter.modifiers.new('Particles', 'PARTICLE_SYSTEM')
    ps = emitter.particle_systems[0].settings
    ps.count = 3000
    ps.frame_start, ps.frame_end = 1, n * 5 // 6
    ps.lifetime = 2 * n
    ps.render_type = 'OBJECT'
    ps.instance_object = ball
    ps.particle_size = 1.0
    emitter.show_instancer_for_render = False
    bpy.ops.mesh.primitive_plane_add(size=20, location=(0, 0, -2))
    ground = bpy.context.object
    ground.modifiers.new('Collision', 'COLLISION')
    cache = emitter.particle_systems[0].point_cache
    cache.frame_start, cache.frame_end = 1, n
    with bpy.context.temp_override(point_cache=cache):
        bpy.ops.ptcache.bake(bake=True)
    scene.frame_set(1)
    cam = scene.camera
    cam.constraints.clear()
    cam.location = (9, -9, 3)
    c = cam.constraints.new('TRACK_TO')
    c.target = ground


def template(scene, n):
    blend = os.path.join(bpy.utils.system_resource('SCRIPTS'), 'startup', 'bl_app_templates_system', 'Sculpting',
                         'startup.blend')
    bpy.ops.wm.open_mainfile(filepath=blend, load_ui=False)
    scene = bpy.context.scene
    cycles(scene, (1, n))
    cam = scene.camera or next(o for o in scene.objects if o.type == 'CAMERA')
    scene.camera = cam
    sphere = next(o for o in scene.objects if o.type == 'MESH')
    start = tuple(cam.location)
    end = tuple(sphere.location[i] + (cam.location[i] - sphere.location[i]) * 0.35 for i in range(3))
    camera_path(cam, start, end, (1, n))
    return scene


def main():
    out, name, n = args()
    scene = bpy.context.scene
    build = {'flythrough': flythrough, 'subdivision': subdivision, 'textures': textures, 'eevee': eevee,
             'particles': particles, 'template': template}.get(name)
    if build is None:
        raise SystemExit('unknown scene %r' % name)
    build(scene, n)
    bpy.ops.wm.save_as_mainfile(filepath=out, compress=False, relative_remap=False)
    print('SCENE_SAVED', out)


main()
