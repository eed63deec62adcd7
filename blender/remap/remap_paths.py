# Points a packed project's .blend at the files the packer placed in the archive (its manifest's
# `remaps`), before analyze.py or render_setup.py reads anything; both put this folder on sys.path.
# A remap {from, to, blendFile} says: the data block of the .blend `blendFile` (archive path) that
# holds the path `from` (compared with `\` read as `/`) must use the archive file `to` instead.
# Paths are set `//`-relative to the .blend holding the data block (a linked data block resolves
# `//` against its library). Libraries are remapped first and reloaded, so that the data blocks
# they bring are there to remap. Nothing is saved: the change lives for this Blender run only.
import json
import os
import posixpath

import bpy


def key(path):
    """Comparison form of a path as written: `\\` read as `/`, `.` and `..` folded, `//` kept."""
    p = path.replace('\\', '/')
    if p.startswith('//'):
        return '//' + posixpath.normpath(p[2:] or '.')
    return posixpath.normpath(p) if p else p


def load(path):
    """(root, remaps) from the JSON file the worker writes: {"root": ABS, "remaps": [...]}."""
    with open(path, encoding='utf-8') as f:
        doc = json.load(f)
    return doc.get('root') or '', doc.get('remaps') or []


class Remapper:
    def __init__(self, root, remaps):
        self.root = os.path.realpath(root)
        self.table = {}
        for r in remaps:
            self.table[(r['blendFile'], key(r['from']))] = r
        self.used = set()
        self.done = []
        self.failed = []

    def archive_path(self, abs_path):
        """Archive path of a file under the root, else None."""
        rel = os.path.relpath(os.path.realpath(abs_path), self.root)
        return None if rel == '..' or rel.startswith('..' + os.sep) or os.path.isabs(rel) else rel.replace(os.sep, '/')

    def holder(self, lib):
        """Absolute path of the .blend holding data of `lib` (None: the main file)."""
        path = bpy.data.filepath if lib is None else bpy.path.abspath(lib.filepath)
        return os.path.realpath(path) if path else ''

    def target(self, lib, path):
        """(remap, new path) for `path` held by data of `lib`; (None, None) when nothing applies."""
        holder = self.holder(lib)
        archive = self.archive_path(holder) if holder else None
        remap = self.table.get((archive, key(path))) if archive and path else None
        if remap is None:
            return None, None
        self.used.add(id(remap))
        dest = os.path.join(self.root, *remap['to'].split('/'))
        return remap, '//' + os.path.relpath(dest, os.path.dirname(holder)).replace(os.sep, '/')

    def apply(self, owner, attr, lib, label):
        """Sets `owner.attr` when a remap names its path; returns True when it changed."""
        try:
            old = getattr(owner, attr)
        except Exception:
            return False
        remap, new = self.target(lib, old)
        if remap is None:
            return False
        try:
            setattr(owner, attr, new)
        except Exception as e:  # e.g. a build that refuses edits to linked data
            self.failed.append({'id': label, 'from': old, 'reason': '%s: %s' % (type(e).__name__, e)})
            return False
        self.done.append({'id': label, 'from': old, 'to': new})
        return True

    def libraries(self):
        # Reloading a library reads the libraries it links: repeat until nothing changes.
        seen = set()
        for _ in range(32):
            changed = False
            for lib in list(bpy.data.libraries):
                if lib.name in seen:
                    continue
                seen.add(lib.name)
                if self.apply(lib, 'filepath', None, 'LI' + lib.name):
                    try:
                        lib.reload()
                    except Exception as e:
                        self.failed.append({'id': 'LI' + lib.name, 'from': lib.filepath,
                                            'reason': 'reload failed: %s: %s' % (type(e).__name__, e)})
                    changed = True
            if not changed:
                break

    def data_blocks(self):
        for coll, code in (('images', 'IM'), ('sounds', 'SO'), ('fonts', 'VF'), ('movieclips', 'MC'),
                           ('cache_files', 'CF'), ('volumes', 'VO'), ('texts', 'TX')):
            for idb in getattr(bpy.data, coll, []):
                if getattr(idb, 'packed_file', None) is None and getattr(idb, 'filepath', ''):
                    self.apply(idb, 'filepath', idb.library, code + idb.name)

    def caches(self):
        for obj in bpy.data.objects:
            label, lib = 'OB' + obj.name, obj.library
            for mod in obj.modifiers:
                for pc in _point_caches(mod):
                    if pc.use_external:
                        self.apply(pc, 'filepath', lib, label)
                if mod.type == 'FLUID' and mod.fluid_type == 'DOMAIN':
                    self.apply(mod.domain_settings, 'cache_directory', lib, label)
                elif mod.type == 'OCEAN':
                    self.apply(mod, 'filepath', lib, label)
        for scene in bpy.data.scenes:
            rbw = scene.rigidbody_world
            if rbw is not None and rbw.point_cache is not None and rbw.point_cache.use_external:
                self.apply(rbw.point_cache, 'filepath', scene.library, 'SC' + scene.name)

    def run(self):
        if self.table:
            self.libraries()
            self.data_blocks()
            self.caches()
        unused = [r for r in self.table.values() if id(r) not in self.used]
        return {'remapped': self.done, 'failed': self.failed,
                'unused': [{'from': r['from'], 'blendFile': r['blendFile']} for r in unused]}


def _point_caches(mod):
    t = mod.type
    if t in ('CLOTH', 'SOFT_BODY'):
        return [mod.point_cache]
    if t == 'DYNAMIC_PAINT' and mod.canvas_settings:
        return [s.point_cache for s in mod.canvas_settings.canvas_surfaces]
    if t == 'PARTICLE_SYSTEM':
        return [mod.particle_system.point_cache]
    return []


def apply_remaps(root, remaps):
    """Applies the remaps to the open file; returns {remapped, failed, unused} (lists of dicts)."""
    return Remapper(root, remaps).run()


def summary(result):
    """A short, JSON-ready account for logs (the full lists can be long)."""
    return {'remapped': len(result['remapped']), 'failed': result['failed'][:20], 'unused': len(result['unused'])}


def describe_failures(result):
    """One sentence for a warning, or None when every remap that applied worked."""
    failed = result['failed']
    if not failed:
        return None
    names = ', '.join('%s (%s)' % (f['id'], f['reason']) for f in failed[:5])
    more = ' and %d more' % (len(failed) - 5) if len(failed) > 5 else ''
    return ('%d path(s) from outside the project could not be pointed at their packed copy: %s%s; '
            'those files render as missing.' % (len(failed), names, more))
