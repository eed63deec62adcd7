# The Estimate button's figures in words (no bpy): an Estimate of the daemon (the service's extension
# estimate, as `Submission.estimate` carries it) turned into the panel's lines, and the plan that lets
# Render on farm reuse the estimated job (nothing uploaded again, the sampled frames kept) while the
# file and the panel's settings are what was estimated.
import json

READY = 'Estimate ready: Render on farm renders this job, keeping the sampled frames.'


def duration(seconds):
    """`45 s`, `2 min 05 s`, `1 h 05 min`."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f'{s} s'
    if s < 3600:
        return f'{s // 60} min {s % 60:02d} s'
    return f'{s // 3600} h {(s % 3600) // 60:02d} min'


def size(n):
    """Bytes as `820 KB`, `1.4 GB`."""
    for unit, scale in (('GB', 1e9), ('MB', 1e6), ('KB', 1e3)):
        if n >= scale:
            return f'{n / scale:.1f} {unit}' if n < 10 * scale else f'{n / scale:.0f} {unit}'
    return f'{int(n)} B'


def money(n):
    return f'{n:.2f}'


def band(b, fmt=duration):
    """A figure and its band: `2 min 10 s (1 min 50 s to 2 min 40 s)`."""
    return f"{fmt(b['value'])} ({fmt(b['low'])} to {fmt(b['high'])})"


def frames_text(frames):
    return ', '.join(str(f) for f in frames)


def lines(estimate):
    """What the panel shows of an estimate: time, cost and memory with their bands, what they rest on,
    and the warnings, one sentence each. [] before there is anything to show."""
    if not estimate:
        return []
    state = estimate.get('state')
    sampled = estimate.get('sampleFrames') or []
    f = estimate.get('figures')
    if state == 'sampling' and not f:
        return ['Rendering sample frames on the farm...']
    if not f:
        return []
    out = []
    if state == 'sampling':
        out.append(f'So far (sampling, from frames {frames_text(sampled)}):')
    wall = f['wallSeconds']
    out.append(f"Time on the farm now: {band(wall)} for {f['framesToRender']} frame(s) left")
    out.append(f"Compute: {band(f['renderSeconds'])} on {f['device']}")
    cost = f.get('cost')
    out.append(f'Cost: {band(cost, money)}' if cost else 'Cost: no price is set on this farm')
    out.append(f"Memory: {f['memory']['summary']}")
    if f.get('outputBytes'):
        out.append(f"Output: {band(f['outputBytes'], size)}")
    # A figure may rest on fewer samples than frames were rendered (frames sampled in pairs).
    out.append(f"Rests on {wall['frames']} sample(s) from frames {frames_text(sampled)}")
    own = estimate.get('ownCost') or {}
    if state == 'ready' and own.get('renderSeconds'):
        paid = f", cost {money(own['cost'])}" if own.get('cost') is not None else ''
        out.append(f"The estimate itself took {duration(own['renderSeconds'])} of rendering{paid}")
    out.extend(f'Warning: {w}' for w in estimate.get('warnings') or [])
    return out


class Plan:
    """What was estimated: the job (once uploaded), the settings, and the file as it was on disk."""

    def __init__(self, settings, blend_path, mtime_ns):
        self.job_id = None
        self.settings = settings
        self.blend_path = blend_path
        self.mtime_ns = mtime_ns

    def reusable(self, settings, blend_path, mtime_ns):
        """True when Render on farm may render the estimated job: same file, unchanged on disk, same settings
        (the service keeps the sampled frames only for the same render request)."""
        return (self.job_id is not None and blend_path == self.blend_path and mtime_ns == self.mtime_ns
                and _same(settings, self.settings))


def _same(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
