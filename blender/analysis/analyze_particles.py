# The memory particle systems take at render, for the estimate of analyze_memory.py (same folder):
# hair strands (parents, and the children that render in their place), instanced objects (only the
# particles alive at once) and the baked point cache, which Blender holds in memory for every frame
# once the file is loaded, whatever frame renders. Fitted on Blender 3.4's reported peak (RAM, the
# figure a CPU render reports; `Mem: ... (Peak ...)`) for script-built scenes (a plane with hair or
# icosphere instances, test/fixtures/blend/build_particles.py; measured 2026-12-06):
#   - instances: 1,000 to 30,000 icospheres added 0.25 to 16.9 MB, about 580 B each (the instance's
#     object record, transform and BVH leaf; the instanced mesh is counted once, with the meshes);
#   - hair: each rendered strand costs about 96 B per key (2^render_step segments + 1 keys: the path
#     cache and Cycles' curve keys and BVH), a child strand 90 B more, a parent 940 B more (its
#     particle and hair keys): 1,000 parents x 100 interpolated children at render_step 3 and 5
#     peaked 95 and 325 MB above the empty scene, 300 x 300 at step 4 153 MB, each within 2 %;
#   - the baked cache of bench:estimate's particles scene (3,000 particles born over 125 frames, 150
#     frames baked) is 7.2 MiB, which the model missed (analysis -41 %): Blender's own count of it
#     (the cache's info line) is read, else about 28 B per particle alive per cached frame.
import re

BYTES_PER_INSTANCE = 580
BYTES_PER_HAIR_KEY = 96
BYTES_PER_CHILD_STRAND = 90
BYTES_PER_PARENT_STRAND = 940
BYTES_PER_CACHED_PARTICLE = 28
# "150 frames in memory (7.2 MiB)." as Blender writes it (BLI_str_format_byte_unit, base 2 or 10).
_CACHE_INFO = re.compile(r'frames in memory \(([\d.,]+)\s*([KMGT]?i?B)\)')
_UNITS = {'B': 1, 'KB': 1e3, 'MB': 1e6, 'GB': 1e9, 'TB': 1e12,
          'KiB': 2 ** 10, 'MiB': 2 ** 20, 'GiB': 2 ** 30, 'TiB': 2 ** 40}


def _alive(ps, frame):
    """Particles alive at `frame`: born evenly from frame_start to frame_end, each living `lifetime`
    frames (all of them where unborn or dead particles show)."""
    if ps.type == 'HAIR' or (getattr(ps, 'show_unborn', False) and getattr(ps, 'use_dead', False)):
        return ps.count
    span = max(ps.frame_end - ps.frame_start, 1.0)

    def share(t):
        return min(max((t - ps.frame_start) / span, 0.0), 1.0) if t >= ps.frame_start else 0.0

    born = ps.count if getattr(ps, 'show_unborn', False) else ps.count * share(frame)
    died = 0 if getattr(ps, 'use_dead', False) else ps.count * share(frame - ps.lifetime)
    return max(born - died, 0)


def _frames(scene):
    first, last = scene.frame_start, max(scene.frame_end, scene.frame_start)
    stride = (last - first) // 1000 + 1  # a long timeline is sampled, not walked frame by frame
    return range(first, last + 1, stride)


def _rendered(ps, n):
    """Strands or instances that render for `n` parents: children replace their parents (unless the
    parents are kept), at the render amount, not the viewport's."""
    if getattr(ps, 'child_type', 'NONE') == 'NONE':
        return n, 0
    children = n * ps.rendered_child_count
    return children + (n if getattr(ps, 'use_parent_particles', False) else 0), children


def _cache_bytes(cache, ps):
    """What the particle system's point cache holds in memory: nothing on disk caches (read a frame at
    a time), Blender's own count from the info line, else the model over the cached frames."""
    if cache is None or cache.use_disk_cache or getattr(cache, 'use_external', False):
        return 0
    m = _CACHE_INFO.search(cache.info or '')
    if m:
        return int(float(m.group(1).replace(',', '')) * _UNITS.get(m.group(2), 1))
    if not cache.is_baked:
        return 0
    frames = range(cache.frame_start, cache.frame_end + 1, max(cache.frame_step, 1))
    return int(sum(_alive(ps, f) for f in frames) * BYTES_PER_CACHED_PARTICLE)


def _instances_per_particle(ps):
    """Objects each particle instances: one, or a whole collection's when it instances all of it."""
    if ps.render_type == 'COLLECTION' and ps.instance_collection is not None and ps.use_whole_collection:
        return max(len([o for o in ps.instance_collection.all_objects if o.type != 'EMPTY']), 1)
    return 1


def instanced_objects(ps):
    """The objects a particle system instances: their meshes render even when hidden themselves."""
    if ps.render_type == 'OBJECT' and ps.instance_object is not None:
        return [ps.instance_object]
    if ps.render_type == 'COLLECTION' and ps.instance_collection is not None:
        return list(ps.instance_collection.all_objects)
    return []


def count_particles(psys, scene, strands):
    """Adds a particle system's hair segments, instances and bytes (strands: `segments`, `instances`,
    `bytes`) at the timeline's peak."""
    ps = psys.settings
    strands['bytes'] += _cache_bytes(getattr(psys, 'point_cache', None), ps)
    if ps.type == 'HAIR' and ps.render_type == 'PATH':
        keys = 2 ** ps.render_step + 1
        rendered, children = _rendered(ps, ps.count)
        strands['segments'] += rendered * (keys - 1)
        # Parents cost their keys even when children render in their place (the children follow them).
        strands['bytes'] += (ps.count * (BYTES_PER_PARENT_STRAND + keys * BYTES_PER_HAIR_KEY)
                             + children * (BYTES_PER_CHILD_STRAND + keys * BYTES_PER_HAIR_KEY))
    elif ps.render_type in ('OBJECT', 'COLLECTION'):
        peak = max((_alive(ps, f) for f in _frames(scene)), default=0)
        n = int(round(_rendered(ps, peak)[0] * _instances_per_particle(ps)))
        strands['instances'] += n
        strands['bytes'] += n * BYTES_PER_INSTANCE
