# Enables the installed add-on, lists what it registered and draws its panels and preferences, with
# no daemon running; then, given ADDRESS, sets the daemon address preference to it (a host that is
# not this computer) and clicks Refresh, Check and Test connection; then disables the add-on.
# Usage: blender -b --python install_check.py -- ZIP RESULT.json [ADDRESS]
# Writes RESULT.json, and RESULT.json.disabled once disabled.
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _addon  # noqa: E402

args = _addon.args()
zip_path, result_path = args[:2]
address = args[2] if len(args) > 2 else ''
package = _addon.install_and_enable(zip_path)

s = _addon.session()
_addon.pump('the daemon health answer', lambda: s.health or s.connection_error, 10)
prefs = _addon.prefs()
out = {
    'blender': list(bpy.app.version),
    'module': package.__name__,
    'file': package.__file__,
    'bl_info': {k: list(v) if isinstance(v, tuple) else v for k, v in package.bl_info.items()},
    'panels': [p for p in _addon.PANELS if hasattr(bpy.types, p)],
    'panel_spaces': [(getattr(bpy.types, p).bl_space_type, getattr(bpy.types, p).bl_region_type)
                     for p in _addon.PANELS if hasattr(bpy.types, p)],
    'operators': sorted(dir(bpy.ops.renderbridge)),
    'prefs': {'daemon_address': prefs.daemon_address, 'download_folder': prefs.download_folder},
    'scene_settings': hasattr(bpy.context.scene, 'renderbridge'),
    'connection_error': s.connection_error,
    'check_poll': bpy.ops.renderbridge.check.poll(),
    'online_access': _addon.online_access(),
    'drawn': _addon.draw_all(),
}

if address:
    prefs.daemon_address = address
    refused = {'refresh': _addon.run_op(bpy.ops.renderbridge.refresh)}
    _addon.pump('the refused address in the panel', lambda: s.address_refused and s.connection_error
                and 'refused' in s.connection_error, 10)
    refused['connection_error'] = s.connection_error
    refused['check'] = _addon.run_op(bpy.ops.renderbridge.check)
    refused['render'] = _addon.run_op(bpy.ops.renderbridge.render)
    refused['test_connection'] = _addon.run_op(bpy.ops.renderbridge.test_connection)
    refused['estimate'] = _addon.run_op(bpy.ops.renderbridge.estimate)
    refused['cancel'] = _addon.run_op(bpy.ops.renderbridge.cancel_job, job_id='00000000-0000-0000-0000-000000000000')
    refused['activity'] = s.activity
    refused['drawn'] = _addon.draw_all()
    out['refused'] = refused

_addon.write(result_path, out)
bpy.ops.preferences.addon_disable(module=_addon.MODULE)
_addon.write(result_path + '.disabled', {'panels': [p for p in _addon.PANELS if hasattr(bpy.types, p)],
                                         'operators': sorted(dir(bpy.ops.renderbridge))})
