# Pure pieces of a submission (no bpy): the frame ranges typed by the artist, the SubmitSettings
# body of POST /submissions (shared/daemon/api.ts), the collected dependencies whose files are
# missing, the output folder of a render, and what the buttons say when they cannot start.
import os
import re
import time

FRAME_RANGE = re.compile(r'^\d{1,7}(-\d{1,7}(x\d{1,7})?)?$')


def parse_frame_ranges(text):
    """`"1-10, 20 30-40x2"` -> `['1-10', '20', '30-40x2']`; ValueError with a readable message when bad."""
    ranges = [p for p in re.split(r'[\s,;]+', text.strip()) if p]
    if not ranges:
        raise ValueError('Enter at least one frame range, e.g. "1-250" or "1-20x2, 40".')
    for r in ranges:
        if not FRAME_RANGE.match(r):
            raise ValueError(f'"{r}" is not a frame range: use N, A-B or A-BxSTEP, e.g. "1-250" or "1-20x2".')
        bounds = r.split('x')[0].split('-')
        if len(bounds) == 2 and int(bounds[0]) > int(bounds[1]):
            raise ValueError(f'"{r}": the first frame comes after the last.')
    if len(ranges) > 100:
        raise ValueError('At most 100 frame ranges.')
    return ranges


DEFAULT_PRIORITY = 50
# shared/api/scheduling.ts's WORKER_TAG_PATTERN and MAX_REQUIRED_TAGS: a bad tag is told here, in the
# panel, rather than as the farm's VALIDATION_ERROR after the upload.
WORKER_TAG = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$')
MAX_REQUIRED_TAGS = 16


def parse_required_tags(text):
    """`"gpu:a4000, site:paris"` -> `['gpu:a4000', 'site:paris']` (empty: none); ValueError naming a bad tag."""
    tags = list(dict.fromkeys(t for t in re.split(r'[\s,;]+', text.strip()) if t))
    for t in tags:
        if not WORKER_TAG.match(t):
            raise ValueError(f'"{t}" is not a worker tag: use letters, digits and . _ : / - '
                             '(e.g. gpu:a4000, site:paris), at most 64 characters.')
    if len(tags) > MAX_REQUIRED_TAGS:
        raise ValueError(f'At most {MAX_REQUIRED_TAGS} required tags.')
    return tags


def build_settings(frames=None, camera='', view_layer='', output_format='', video=None, notes='',
                   priority=DEFAULT_PRIORITY, preview_frames=True, required_tags=()):
    """The SubmitSettings body; empty values are left out (the file's own settings apply), and so is
    `scheduling` while priority, previews and required tags are the farm's defaults (a farm without the scheduling
    extension then gets exactly what it always got)."""
    settings = {}
    scheduling = {}
    if priority != DEFAULT_PRIORITY:
        scheduling['priority'] = int(priority)
    if not preview_frames:
        scheduling['previewFrames'] = False
    if required_tags:
        scheduling['requiredTags'] = list(required_tags)
    if scheduling:
        settings['scheduling'] = scheduling
    if frames:
        settings['frames'] = list(frames)
    if camera:
        settings['camera'] = camera
    if view_layer:
        settings['viewLayer'] = view_layer
    if output_format:
        settings['format'] = output_format
    if video is not None:
        settings['video'] = bool(video)
    if notes.strip():
        settings['renderConfig'] = {'notes': notes.strip()[:4000]}
    return settings


def is_missing(dep):
    """True when nothing on disk backs a CollectedDependency."""
    pattern = dep.get('pattern', 'file')
    if pattern in ('udim', 'sequence'):
        return not dep.get('files')
    if pattern == 'directory':
        return not os.path.isdir(dep['absolute'])
    return not os.path.isfile(dep['absolute'])


def missing_files(dependencies):
    return [d for d in dependencies if is_missing(d)]


def describe_missing(missing, limit=5):
    names = [d['path'] for d in missing[:limit]]
    more = f' and {len(missing) - limit} more' if len(missing) > limit else ''
    return f'{len(missing)} missing file(s): ' + ', '.join(names) + more


def output_folder(download_root, blend_file, now=None):
    """`<download root>/<blend stem>-<YYYYmmdd-HHMMSS>`; None when no root is set (the daemon's default)."""
    if not download_root:
        return None
    stem = os.path.splitext(os.path.basename(blend_file))[0] or 'render'
    stamp = time.strftime('%Y%m%d-%H%M%S', time.localtime(now))
    return os.path.join(os.path.abspath(os.path.expanduser(download_root)), f'{stem}-{stamp}')


def save_plan(filepath, is_dirty):
    """What to do with the .blend before a Check / Render on farm: 'save_as' when it was never saved
    (no path: there is nothing to pack), 'save' when it has unsaved changes (the farm must get what
    the artist sees), else 'ok'."""
    if not filepath:
        return 'save_as'
    return 'save' if is_dirty else 'ok'


NEVER_SAVED = 'The file has never been saved: save it (File > Save As), then try again.'


def save_hint(filepath, is_dirty):
    """The panel's line above Check and Render on farm, before any click: ('ERROR', text) for a file
    never saved, ('INFO', text) for unsaved changes, None for a saved file without changes."""
    plan = save_plan(filepath, is_dirty)
    if plan == 'save_as':
        return 'ERROR', 'Not saved yet: save the file (File > Save As) before Check or Render on farm.'
    if plan == 'save':
        return 'INFO', 'Unsaved changes: Check and Render on farm save them first (the farm renders the saved file).'
    return None


# What the Check and Render on farm buttons say when they cannot start (each says what to do next).
def save_first(label):
    """The warning of a click on a never saved file, while Blender's Save As dialog opens."""
    return f'Save the file first, then click "{label}" again.'


def could_not_save(path, err):
    """The error when saving the changes before packing failed: Blender's reason, on one line."""
    reason = ' '.join(str(err).split())
    if reason.startswith('Error: '):
        reason = reason[len('Error: '):]
    return (f'Could not save {path} ({reason}): the farm renders the saved file, so nothing was sent. '
            'Save it where you can write (File > Save As), then try again.')


def not_on_disk(path):
    """The error when the open file is no longer where it was opened from (moved or deleted meanwhile)."""
    return (f'{path} is no longer on disk (moved or deleted since it was opened), so there is nothing to pack: '
            'save it again (File > Save As), then try again.')


def no_view_layer(layer, scene):
    return (f'No view layer "{layer}" in scene "{scene}": choose one of its view layers in the panel, '
            'or clear the field.')
