# Which files belong to a Blender installation rather than to the user's project: its bundled data
# (matcaps, studio lights, fonts, the Essentials asset libraries) exists wherever a Blender runs, so
# such a file is never a missing user file nor a file to pack. One rule for the add-on's dependency
# collector (dependencies.py) and the worker's analysis (blender/analysis/analyze_files.py, which
# imports this file by path). Imports nothing of the add-on, so both can load it.
import os
import re

# Blender's bundled asset libraries (4.x+: brushes, node groups) as any installation holds them:
# .../<version>/datafiles/assets/brushes/essentials_brushes-gp_draw.blend (Windows, macOS, Linux).
BUNDLED_ASSET = re.compile(r'(?:^|/)datafiles/assets/(.+)$')


def install_roots():
    """Folders of the running Blender's installation (LOCAL, SYSTEM and its datafiles)."""
    import bpy
    roots = []
    for kind in ('LOCAL', 'SYSTEM'):
        try:
            roots.append(bpy.utils.resource_path(kind))
        except Exception:
            pass
    try:
        roots.append(bpy.utils.system_resource('DATAFILES'))
    except Exception:
        pass
    return [os.path.normpath(r) for r in roots if r]


def bundled_asset(path, roots):
    """True for a bundled asset library written with another installation's path (the file was saved
    on another machine): it comes with every Blender, it is no file of the project."""
    m = BUNDLED_ASSET.search(path.replace('\\', '/'))
    if not m:
        return False
    tail = m.group(1)
    if 'essentials' in os.path.basename(tail):
        return True
    return any(os.path.exists(os.path.join(r, 'assets', *tail.split('/'))) for r in roots)
