# The renderbridge add-on: registration only. Panels, operators, preferences, the daemon client
# (no bpy), the worker thread and the dependency collector live in their own modules.
# `bl_info` serves legacy installs (Blender 3.4 to 4.1); blender_manifest.toml the 4.2+ extensions.
bl_info = {
    'name': 'Renderbridge',
    'author': 'renderbridge',
    'version': (0, 1, 0),
    'blender': (3, 4, 0),
    'location': 'Properties > Render > Renderbridge, and 3D View > Sidebar > Renderbridge',
    'description': 'Check and render the scene on a render farm through the local renderbridge daemon',
    'category': 'Render',
}

# Blender's convention puts bl_info first, hence the imports below it (E402).
import bpy  # noqa: E402


from . import operators_jobs, operators_submit, panels, preferences, properties, session  # noqa: E402

_CLASSES = (properties.CLASSES + preferences.CLASSES + operators_submit.CLASSES + operators_jobs.CLASSES
            + panels.CLASSES)


def register():
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    properties.register()
    session.Registration.start()


def unregister():
    session.Registration.stop()
    properties.unregister()
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
