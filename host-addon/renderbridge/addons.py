# The enabled add-ons a scene may need on the farm: every enabled add-on that does not ship with
# Blender (not under Blender's own scripts folders) except this one, offered for bundling with a
# checkbox each (the scene's `renderbridge.addons`), and sent to POST /pack as AddonToBundle.
import os
import sys

import bpy

from . import paths


def _bundled_roots():
    roots = []
    scripts = bpy.utils.system_resource('SCRIPTS')
    if scripts:
        roots += [os.path.join(scripts, 'addons'), os.path.join(scripts, 'addons_core'),
                  os.path.join(scripts, 'addons_contrib'), os.path.join(scripts, 'startup')]
    return roots


def candidates(context):
    """[{module, name, path, addonType}] of the enabled add-ons that are not Blender's own."""
    roots = _bundled_roots()
    found = []
    for addon in context.preferences.addons:
        module = addon.module
        if module == __package__:
            continue
        mod = sys.modules.get(module)
        file = getattr(mod, '__file__', None)
        if not file:
            continue
        path = os.path.dirname(file) if os.path.basename(file) == '__init__.py' else file
        if paths.is_under(path, roots):
            continue
        info = getattr(mod, 'bl_info', None) or {}
        found.append({'module': module, 'name': str(info.get('name', module)), 'path': os.path.abspath(path),
                      'addonType': 'extension' if module.startswith('bl_ext.') else 'addon'})
    return sorted(found, key=lambda a: a['module'])


def refresh(context, settings):
    """Updates the scene's list from the enabled add-ons, keeping each one's checkbox."""
    chosen = {a.module: a.selected for a in settings.addons}
    settings.addons.clear()
    for c in candidates(context):
        item = settings.addons.add()
        item.module, item.label, item.path, item.addon_type = c['module'], c['name'], c['path'], c['addonType']
        item.selected = chosen.get(c['module'], True)


def to_bundle(settings):
    return [{'module': a.module, 'name': a.label, 'path': a.path, 'addonType': a.addon_type, 'selected': a.selected}
            for a in settings.addons]
