# Pure path helpers of the dependency collector (no bpy, so plain python3 can test them):
# how Blender names numbered frames and UDIM tiles, which files on disk a pattern covers, and
# the Windows-path twin of a path written on another machine.
import os
import re

UDIM_TOKEN = re.compile(r'<UDIM>|<UVTILE>')


def has_udim_token(path):
    return UDIM_TOKEN.search(path) is not None


def slash_twin(path):
    """The path with `\\` read as `/` (a file saved on Windows, opened here); None when it has none."""
    return path.replace('\\', '/') if '\\' in path else None


def existing_variant(path):
    """`path` when it exists, else its slash twin when that exists, else `path` (for the report)."""
    if os.path.exists(path):
        return path
    twin = slash_twin(path)
    return twin if twin is not None and os.path.exists(twin) else path


def sequence_parts(path):
    """(head, digits, tail) as Blender's BLI_path_sequence_decode splits a frame file name: the last
    run of digits before the extension of the last path segment. None when the name has no digits."""
    cut = max(path.rfind('/'), path.rfind('\\')) + 1
    name = path[cut:]
    dot = name.rfind('.')
    stem_end = dot if dot > 0 else len(name)
    m = re.search(r'(\d+)(?=\D*$)', name[:stem_end])
    if m is None:
        return None
    return path[:cut] + name[:m.start()], m.group(1), name[m.end():]


def _matching(folder, name_re):
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = (os.path.join(folder, n) for n in names if name_re.fullmatch(n))
    return sorted(f for f in found if os.path.isfile(f))


def expand_udim(abs_pattern):
    """Files on disk matching a `<UDIM>` (1001, 1002...) or `<UVTILE>` (u1_v1...) pattern, absolute, sorted."""
    folder, name = os.path.split(abs_pattern)
    parts = UDIM_TOKEN.split(name)
    tokens = UDIM_TOKEN.findall(name)
    rx = re.escape(parts[0])
    for tok, rest in zip(tokens, parts[1:]):
        rx += (r'\d{4}' if tok == '<UDIM>' else r'u\d+_v\d+') + re.escape(rest)
    return _matching(folder, re.compile(rx))


def expand_sequence(abs_frame):
    """Every frame file of the sequence `abs_frame` belongs to (same head and tail, any number), sorted.
    A name without digits is a sequence of one file (when it exists)."""
    parts = sequence_parts(abs_frame)
    if parts is None:
        return [abs_frame] if os.path.isfile(abs_frame) else []
    head, _digits, tail = parts
    folder, prefix = os.path.split(head)
    return _matching(folder, re.compile(re.escape(prefix) + r'\d+' + re.escape(tail)))


def is_under(path, roots):
    """True when `path` lies inside one of the folders `roots` (e.g. Blender's bundled data files)."""
    p = os.path.normcase(os.path.normpath(path))
    for r in roots:
        if not r:
            continue
        r = os.path.normcase(os.path.normpath(r))
        if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


class DependencyList:
    """Dependencies keyed by (holding .blend, path as written): one entry each, users merged, order kept."""

    def __init__(self):
        self._items = {}

    def add(self, path, absolute, kind, blend_file, used_by, pattern='file', files=None):
        key = (blend_file, path)
        dep = self._items.get(key)
        if dep is None:
            dep = {'path': path, 'absolute': absolute, 'kind': kind, 'pattern': pattern,
                   'blendFile': blend_file, 'usedBy': []}
            if files is not None:
                dep['files'] = list(files)
            self._items[key] = dep
        if used_by and used_by not in dep['usedBy']:
            dep['usedBy'].append(used_by)
        return dep

    def items(self):
        return list(self._items.values())
