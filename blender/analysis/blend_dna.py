# Reads a few saved strings straight from a .blend's bytes, for what Blender's Python API hides once the
# add-on that defined them is missing (used by analyze_addons.py):
#   - the type name (`idname`) of node trees and nodes: RNA shows `NodeTreeUndefined` / `NodeUndefined`;
#   - each scene's render engine: RNA falls back to the first engine (EEVEE) when the saved one is missing.
# Nothing is executed; the file is only parsed. Format: a header, then blocks up to `ENDB`; the `DNA1`
# block describes every struct's fields, so offsets are never hard-coded. Two layouts:
#   up to 4.x  12-byte header `BLENDER` + `-`/`_` (8/4-byte pointers) + `v`/`V` (endianness) + `304`;
#              block header: code, length (int), old address (pointer size), SDNA index, count
#   5.0+       17-byte header `BLENDER17-01v0502` (header size, `-`, file format version 01,
#              endianness, version); block header: code, SDNA index (int), old address, length,
#              count (64-bit each) Plain and gzip files only: zstd (Blender 3.0+ "Compress") needs a module
# Blender's Python lacks, so `read` returns None and the caller falls back to what RNA shows.
import gzip
import re
import struct

WANTED = ('bNodeTree', 'bNode', 'Scene')


def _open(path):
    f = open(path, 'rb')
    magic = f.read(2)
    f.seek(0)
    if magic == b'\x1f\x8b':
        f.close()
        return gzip.open(path, 'rb')
    return f


def _cstr(b):
    return b.split(b'\0', 1)[0].decode('utf-8', 'replace')


def _header(f):
    """(pointer size, endianness, header size, large block headers) of an open .blend; None for another file."""
    head = f.read(12)
    if not head.startswith(b'BLENDER'):
        return None
    if head[7:8] in (b'-', b'_'):
        return (8 if head[7:8] == b'-' else 4), ('<' if head[8:9] == b'v' else '>'), 12, False
    if not head[7:9].isdigit() or head[9:10] != b'-':
        return None
    size = int(head[7:9])
    head += f.read(size - len(head))
    return 8, ('<' if head[12:13] == b'v' else '>'), size, True


def _blocks(f, ptr, end, large=False):
    """(code, sdna index, old address, file offset of data, length) of every block; data is skipped."""
    if large:
        head = struct.Struct(end + '4siQqq')
    else:
        head = struct.Struct(end + '4si' + ('Q' if ptr == 8 else 'I') + 'ii')
    while True:
        raw = f.read(head.size)
        if len(raw) < head.size:
            return
        if large:
            code, sdna, old, length, _count = head.unpack(raw)
        else:
            code, length, old, sdna, _count = head.unpack(raw)
        if code == b'ENDB':
            return
        pos = f.tell()
        yield code, sdna, old, pos, length
        f.seek(pos + length)


def _strings(data, i, end):
    """A count at `i`, then that many NUL-terminated names; returns them and the next 4-aligned offset."""
    n = struct.unpack_from(end + 'i', data, i)[0]
    i += 4
    out = []
    for _ in range(n):
        j = data.index(b'\0', i)
        out.append(data[i:j].decode('latin-1'))
        i = j + 1
    return out, (i + 3) & ~3


def _parse_sdna(data, ptr, end):
    """struct name -> {field name without array suffix: (offset, size)}, and struct index -> name."""
    names, i = _strings(data, 8, end)  # 'SDNA' 'NAME' count, names
    types, i = _strings(data, i + 4, end)  # 'TYPE' count, names
    n = len(types)
    lengths = struct.unpack_from(end + '%dh' % n, data, i + 4)  # 'TLEN'
    i = (i + 4 + 2 * n + 3) & ~3
    count = struct.unpack_from(end + 'i', data, i + 4)[0]  # 'STRC'
    i += 8
    by_index, fields = [], {}
    for _ in range(count):
        t, nf = struct.unpack_from(end + 'hh', data, i)
        i += 4
        off, layout = 0, {}
        for _ in range(nf):
            ft, fn = struct.unpack_from(end + 'hh', data, i)
            i += 4
            name = names[fn]
            dims = 1
            for d in re.findall(r'\[(\d+)\]', name):
                dims *= int(d)
            size = (ptr if name.startswith('*') or name.startswith('(*') else lengths[ft]) * dims
            layout[re.sub(r'^[*(]+|[)]?\[.*$|\)\(.*$', '', name)] = (off, size)
            off += size
        by_index.append(types[t])
        fields[types[t]] = layout
    return by_index, fields


def read(path):
    """{'trees': [(tree name, idname, [(node name, idname)])], 'engines': {scene name: engine}}, or None."""
    with _open(path) as f:
        header = _header(f)
        if header is None:
            return None
        ptr, end, header_size, large = header
        dna = None
        for code, _sdna, _old, pos, length in _blocks(f, ptr, end, large):
            if code == b'DNA1':
                f.seek(pos)
                dna = f.read(length)
                break
        if dna is None:
            return None
        by_index, fields = _parse_sdna(dna, ptr, end)
        f.seek(header_size)
        found = {name: [] for name in WANTED}
        for _code, sdna, old, pos, length in _blocks(f, ptr, end, large):
            kind = by_index[sdna] if 0 <= sdna < len(by_index) else None
            if kind in found:
                f.seek(pos)
                found[kind].append((old, f.read(length)))
    ptr_fmt = end + ('Q' if ptr == 8 else 'I')

    def field(kind, data, name):
        off, size = fields[kind][name]
        return data[off:off + size]

    nodes = {old: data for old, data in found['bNode']}
    trees = []
    for _old, data in found['bNodeTree']:
        tree_name = _cstr(field('ID', field('bNodeTree', data, 'id'), 'name'))[2:]
        first = struct.unpack(ptr_fmt, field('ListBase', field('bNodeTree', data, 'nodes'), 'first'))[0]
        members, seen = [], set()
        while first and first in nodes and first not in seen:  # follow the saved `next` pointers
            seen.add(first)
            nd = nodes[first]
            members.append((_cstr(field('bNode', nd, 'name')), _cstr(field('bNode', nd, 'idname'))))
            first = struct.unpack(ptr_fmt, field('bNode', nd, 'next'))[0]
        trees.append((tree_name, _cstr(field('bNodeTree', data, 'idname')), members))
    engines = {}
    for _old, data in found['Scene']:
        engines[_cstr(field('ID', field('Scene', data, 'id'), 'name'))[2:]] = _cstr(
            field('RenderData', field('Scene', data, 'r'), 'engine'))
    return {'trees': trees, 'engines': engines}
