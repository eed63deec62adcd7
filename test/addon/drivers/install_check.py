# Installs the add-on zip, enables it and lists what it registered; writes the JSON result file.
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

zip_path, result_path = _addon.args()[:2]
_addon.install_and_enable(zip_path)
import renderbridge  # noqa: E402

s = _addon.session()
_addon.pump('the daemon health answer', lambda: s.health or s.connection_error, 10)
prefs = bpy.context.preferences.addons['renderbridge'].preferences
_addon.write(result_path, {
    'file': renderbridge.__file__,
    'bl_info': {k: list(v) if isinstance(v, tuple) else v for k, v in renderbridge.bl_info.items()},
    'panels': [p for p in ('RENDERBRIDGE_PT_render', 'RENDERBRIDGE_PT_sidebar') if hasattr(bpy.types, p)],
    'panel_spaces': [(getattr(bpy.types, p).bl_space_type, getattr(bpy.types, p).bl_region_type)
                     for p in ('RENDERBRIDGE_PT_render', 'RENDERBRIDGE_PT_sidebar') if hasattr(bpy.types, p)],
    'operators': sorted(dir(bpy.ops.renderbridge)),
    'prefs': {'daemon_address': prefs.daemon_address, 'download_folder': prefs.download_folder},
    'scene_settings': hasattr(bpy.context.scene, 'renderbridge'),
    'connection_error': s.connection_error,
    'check_poll': bpy.ops.renderbridge.check.poll(),
})
bpy.ops.preferences.addon_disable(module='renderbridge')
_addon.write(result_path + '.disabled', {'panels': [p for p in ('RENDERBRIDGE_PT_render', 'RENDERBRIDGE_PT_sidebar')
                                                    if hasattr(bpy.types, p)]})
