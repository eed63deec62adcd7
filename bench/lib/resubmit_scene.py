# The .blend of `npm run bench:resubmit`: the factory cube rendered tiny with Cycles (64x48, 4
# samples, see test/fixtures/blend/_common.py), its material mixing N image textures at
# //textures/tex_NN.png so that every texture is a real dependency the packer must find.
# The texture files themselves are written by the benchmark (random bytes). Usage:
#   blender -b --factory-startup -noaudio --python resubmit_scene.py -- OUT.blend N
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'test', 'fixtures', 'blend'))
import _common  # noqa: E402

import bpy  # noqa: E402

out, count = _common.args()[:2]
scene = bpy.context.scene
_common.tiny_render(scene, frames=(1, 1))
mat = bpy.data.materials.new('Textures')
mat.use_nodes = True
nodes, links = mat.node_tree.nodes, mat.node_tree.links
bsdf = nodes['Principled BSDF']
previous = None
for i in range(1, int(count) + 1):
    img = bpy.data.images.new(f'tex_{i:02d}', 4, 4)
    img.source = 'FILE'
    img.filepath = f'//textures/tex_{i:02d}.png'
    tex = nodes.new('ShaderNodeTexImage')
    tex.image = img
    if previous is None:
        previous = tex.outputs['Color']
        continue
    mix = nodes.new('ShaderNodeMixRGB')
    mix.inputs['Fac'].default_value = 1.0 / i
    links.new(previous, mix.inputs['Color1'])
    links.new(tex.outputs['Color'], mix.inputs['Color2'])
    previous = mix.outputs['Color']
links.new(previous, bsdf.inputs['Base Color'])
bpy.data.objects['Cube'].data.materials.append(mat)
_common.save(out)
