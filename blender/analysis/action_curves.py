# An action's F-curves on every Blender the analysis runs on (3.4 to 5.x), for analyze.py,
# analyze_memory.py and analyze_steps.py: from 5.0 actions are layered and `action.fcurves` is gone
# (on 5.2 the memory estimate failed on every animated file: "'Action' object has no attribute 'fcurves'").
from analyze_render import g


def action_fcurves(a):
    """An action's F-curves: `action.fcurves` up to 4.x; from 5.0 only in the layered actions'
    channel bags (one per slot, in the strips of each layer)."""
    fcurves = g(a, 'fcurves')
    if fcurves is not None:
        return list(fcurves)
    return [fc for layer in g(a, 'layers', ()) for strip in layer.strips
            for bag in g(strip, 'channelbags', ()) for fc in bag.fcurves]
