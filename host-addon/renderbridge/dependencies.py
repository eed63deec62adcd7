# The add-on's dependency collector: every external file the open .blend needs, its own and those
# of its linked libraries, as the CollectedDependencies document (shared/pack/dependencies.ts).
# Runs inside the artist's Blender or headless (blender/trace/trace_deps.py). Reads only.
# Paths are reported exactly as each data block holds them; `absolute` resolves `//` against the
# .blend that holds the data block (a linked data block's library, else the main file). Library
# paths themselves are held relative to the main file: Blender rewrites nested ones on load.
import os

import bpy

from . import paths
from .blender_own import bundled_asset, install_roots

ID_CODES = {'images': 'IM', 'libraries': 'LI', 'sounds': 'SO', 'fonts': 'VF', 'movieclips': 'MC',
            'cache_files': 'CF', 'volumes': 'VO', 'texts': 'TX', 'objects': 'OB', 'scenes': 'SC'}


class Collector:
    def __init__(self):
        self.main = os.path.normpath(bpy.path.abspath(bpy.data.filepath)) if bpy.data.filepath else ''
        self.deps = paths.DependencyList()
        self.bundled = install_roots()

    def bundled_library(self, lib):
        """Whether data of `lib` comes from one of Blender's own files (its Essentials assets)."""
        if lib is None:
            return False
        path = lib.filepath
        return paths.is_under(self.absolute(path, lib.parent), self.bundled) or bundled_asset(path, self.bundled)

    def holder(self, lib):
        """Absolute path of the .blend holding a data block of `lib` (None: the main file)."""
        if lib is None:
            return self.main
        return os.path.normpath(bpy.path.abspath(lib.filepath))

    def absolute(self, path, lib):
        return paths.existing_variant(os.path.normpath(bpy.path.abspath(path, library=lib)))

    def add(self, path, kind, lib, user, pattern='file'):
        if not path or path == '<builtin>':
            return
        absolute = self.absolute(path, lib)
        if paths.is_under(absolute, self.bundled) or bundled_asset(path, self.bundled) or self.bundled_library(lib):
            return
        files = None
        if pattern == 'udim':
            files = paths.expand_udim(absolute)
        elif pattern == 'sequence':
            files = paths.expand_sequence(absolute)
        self.deps.add(path, absolute, kind, self.holder(lib), user, pattern, files)

    def user(self, collection, idb):
        return ID_CODES.get(collection, 'ID') + idb.name

    def images(self):
        for img in bpy.data.images:
            if img.packed_file or len(getattr(img, 'packed_files', ())) or not img.filepath:
                continue
            if img.source == 'TILED':
                pattern = 'udim' if paths.has_udim_token(img.filepath) else 'file'
            elif img.source == 'SEQUENCE':
                pattern = 'sequence'
            elif img.source in ('FILE', 'MOVIE'):
                pattern = 'file'
            else:  # GENERATED, VIEWER: nothing on disk
                continue
            self.add(img.filepath, 'image', img.library, self.user('images', img), pattern)

    def libraries(self):
        for lib in bpy.data.libraries:
            if not lib.packed_file:
                self.add(lib.filepath, 'library', None, self.user('libraries', lib))

    def simple(self):
        for coll, kind in (('sounds', 'sound'), ('fonts', 'font'), ('cache_files', 'cache')):
            for idb in getattr(bpy.data, coll, []):
                if not getattr(idb, 'packed_file', None):
                    pattern = 'sequence' if getattr(idb, 'is_sequence', False) else 'file'
                    self.add(idb.filepath, kind, idb.library, self.user(coll, idb), pattern)
        for clip in bpy.data.movieclips:
            pattern = 'sequence' if clip.source == 'SEQUENCE' else 'file'
            self.add(clip.filepath, 'movieclip', clip.library, self.user('movieclips', clip), pattern)
        for vol in getattr(bpy.data, 'volumes', []):
            if not vol.packed_file:
                pattern = 'sequence' if vol.is_sequence else 'file'
                self.add(vol.filepath, 'volume', vol.library, self.user('volumes', vol), pattern)
        for txt in bpy.data.texts:
            # A text's content lives in the .blend; its file matters only when it still exists.
            if txt.filepath and not txt.is_in_memory and os.path.isfile(self.absolute(txt.filepath, txt.library)):
                self.add(txt.filepath, 'text', txt.library, self.user('texts', txt))

    def point_cache(self, pc, lib, user):
        if pc is None or not pc.use_disk_cache:
            return
        if pc.use_external:
            self.add(pc.filepath, 'cache', lib, user, 'directory')
            return
        # Blender's default folder, blendcache_<file name> beside the .blend holding the data.
        holder = self.holder(lib)
        folder = '//blendcache_' + os.path.splitext(os.path.basename(holder))[0]
        if holder and os.path.isdir(self.absolute(folder, lib)):
            self.add(folder, 'cache', lib, user, 'directory')

    def modifiers(self):
        for obj in bpy.data.objects:
            user, lib = self.user('objects', obj), obj.library
            for mod in obj.modifiers:
                t = mod.type
                if t in ('CLOTH', 'SOFT_BODY'):
                    self.point_cache(mod.point_cache, lib, user)
                elif t == 'DYNAMIC_PAINT' and mod.canvas_settings:
                    for surf in mod.canvas_settings.canvas_surfaces:
                        self.point_cache(surf.point_cache, lib, user)
                elif t == 'PARTICLE_SYSTEM':
                    self.point_cache(mod.particle_system.point_cache, lib, user)
                elif t == 'FLUID' and mod.fluid_type == 'DOMAIN':
                    d = mod.domain_settings
                    if os.path.isdir(self.absolute(d.cache_directory, lib)):
                        self.add(d.cache_directory, 'cache', lib, user, 'directory')
                elif t == 'OCEAN' and mod.is_cached:
                    self.add(mod.filepath, 'cache', lib, user, 'directory')
        for scene in bpy.data.scenes:
            rbw = scene.rigidbody_world
            if rbw is not None:
                self.point_cache(rbw.point_cache, scene.library, self.user('scenes', scene))

    def run(self):
        for step in (self.images, self.libraries, self.simple, self.modifiers):
            step()
        return {'version': 1, 'blendFile': self.main, 'blenderVersion': bpy.app.version_string,
                'dependencies': self.deps.items()}


def collect():
    """The CollectedDependencies document (a dict ready for json.dumps) of the open .blend."""
    return Collector().run()
