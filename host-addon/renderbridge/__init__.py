# The renderbridge add-on: registration only. The UI comes with its own issue; the dependency
# collector (dependencies.py) is also run headless by the daemon (daemon/python/trace_deps.py).
bl_info = {
    'name': 'Renderbridge',
    'author': 'renderbridge',
    'version': (0, 1, 0),
    'blender': (3, 4, 0),
    'location': 'Properties > Render',
    'description': 'Send the scene to a render farm through the renderbridge daemon',
    'category': 'Render',
}


def register():
    pass


def unregister():
    pass
