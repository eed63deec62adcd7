# Steps of animated integer and boolean properties, for the estimate's sample frames (extension
# estimate): a keyframed Subdivision level, a particle count or a render toggle changes a frame's
# cost in steps, not along a line, and an estimate that interpolates linearly between samples on
# either side of a step misjudges every frame between them (bench:estimate's subdivision, levels 0
# to 5: +17 %). For every F-curve of such a property (found through the datablocks that use the
# action), the frames of the scene's range where its value changes, with the new value, are added
# to the curve's entry in `animations` as `steps`. Blender rounds an integer curve's value (an F-curve
# of an integer property evaluates to floor(x + 0.5)) and reads a boolean one as on from 0.001.
from analyze_render import g

# Frames evaluated at most per curve: a longer range is cut (the estimate ignores a curve this busy anyway).
MAX_FRAMES = 20000
# Steps kept at most per curve: a curve that changes on most frames (a seed) is no step function worth sampling.
MAX_STEPS = 64
# Datablock collections whose animation the render sees.
COLLECTIONS = ('objects', 'scenes', 'meshes', 'materials', 'particles', 'node_groups', 'worlds', 'cameras',
               'lights', 'curves', 'textures')


def stepped_kind(owner, data_path, index):
    """'int' or 'bool' when the curve drives such a property of `owner`, else None."""
    try:
        value = owner.path_resolve(data_path)
    except Exception:
        return None
    if hasattr(value, '__len__') and not isinstance(value, str):
        try:
            value = value[index]
        except Exception:
            return None
    if isinstance(value, bool):
        return 'bool'
    return 'int' if isinstance(value, int) else None


def curve_steps(fc, kind, start, end):
    """[{frame, value}] where the property's value changes within start..end (the value at start first)."""
    end = min(end, start + MAX_FRAMES)

    def at(f):
        x = fc.evaluate(f)
        return int(x >= 0.001) if kind == 'bool' else int((x + 0.5) // 1)

    last = at(start)
    out = [{'frame': start, 'value': last}]
    for f in range(start + 1, end + 1):
        v = at(f)
        if v != last:
            out.append({'frame': f, 'value': v})
            last = v
            if len(out) > MAX_STEPS:
                break
    return out


def integer_steps(scene, res, action_fcurves):
    """Adds `steps` to the integer and boolean curves of res['animations'] (data_lists fills it first)."""
    owners = {}
    for name in COLLECTIONS:
        for idb in g(bpy_data(), name, ()) or ():
            ad = g(idb, 'animation_data')
            action = g(ad, 'action') if ad else None
            if action is not None:
                owners.setdefault(action.name, []).append(idb)
    start, end = int(scene.frame_start), int(scene.frame_end)
    for entry in res.get('animations', []):
        users = owners.get(entry['name'], [])
        curves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(bpy_data().actions[entry['name']])}
        for item in entry['fcurves']:
            fc = curves.get((item['data_path'], item['index']))
            kind = next((k for k in (stepped_kind(u, item['data_path'], item['index']) for u in users) if k), None)
            if fc is not None and kind:
                item['steps'] = curve_steps(fc, kind, start, end)


def bpy_data():
    import bpy
    return bpy.data
