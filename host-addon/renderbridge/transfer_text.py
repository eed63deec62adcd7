# The progress lines the panel shows while a project is packed and uploaded, from the daemon's
# Transfer objects (bytesDone, bytesTotal, bytesPerSecond, etaSeconds): a background pack's state
# (GET /packs/:id) and a submission's `pack` and `upload`. No bpy: tested with plain python3.
# The same wording as the tray and the CLI: "Packing 120 MB / 500 MB · 80 MB/s · 5 s left".

SEP = ' \u00b7 '


def format_bytes(n):
    """Decimal units, as file managers and network speeds count: `999 B`, `1.5 MB`, `120 MB`, `2.1 GB`."""
    n = max(0, int(n or 0))
    if n < 1000:
        return f'{n} B'
    for unit in ('kB', 'MB', 'GB', 'TB'):
        n /= 1000.0
        if n < 999.95 or unit == 'TB':
            return f'{n:.1f} {unit}' if n < 10 else f'{n:.0f} {unit}'
    return f'{n:.0f} TB'  # unreachable: the loop ends at TB


def format_duration(seconds):
    """`5 s`, `2 min 05 s`, `1 h 03 min`."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f'{h} h {m:02d} min'
    if m:
        return f'{m} min {s:02d} s'
    return f'{s} s'


def transfer_line(verb, transfer):
    """`Verb done / total · rate · time left`; the rate and time only once known."""
    t = transfer or {}
    done, total = t.get('bytesDone') or 0, t.get('bytesTotal') or 0
    parts = [f'{verb} {format_bytes(done)} / {format_bytes(total)}' if total else f'{verb}...']
    rate = t.get('bytesPerSecond') or 0
    if rate > 0 and done < total:
        parts.append(f'{format_bytes(rate)}/s')
    eta = t.get('etaSeconds')
    if eta is not None and done < total:
        parts.append(f'{format_duration(eta)} left')
    return SEP.join(parts)


PHASE_VERB = {'hashing': 'Packing', 'zipping': 'Zipping'}


def pack_line(state):
    """What a background pack (PackState) is doing."""
    state = state or {}
    if state.get('state') == 'ready':
        result = state.get('result') or {}
        return f"Packed {result.get('fileCount', 0)} file(s), {format_bytes(result.get('bytes', 0))}"
    if state.get('state') == 'failed':
        err = state.get('error') or {}
        return f"Packing failed: {err.get('message', 'see the daemon log')}"
    phase = state.get('phase')
    if phase == 'tracing':
        return 'Finding the files the scene uses (Blender)...'
    if phase in PHASE_VERB:
        return transfer_line(PHASE_VERB[phase], state.get('progress'))
    return 'Packing...'


def upload_line(upload):
    """A submission's upload: bytes to send, and what the farm already held."""
    line = transfer_line('Uploading', upload)
    skipped = (upload or {}).get('bytesSkipped') or 0
    if skipped:
        line += f' ({format_bytes(skipped)} already on the farm)'
    retries = (upload or {}).get('retries') or 0
    if retries:
        line += f', {retries} retr{"y" if retries == 1 else "ies"}'
    return line


def submission_line(sub):
    """The transfer line of a submission (Submission) while it packs or uploads, else None."""
    sub = sub or {}
    step = sub.get('step')
    if step == 'packing' and sub.get('pack'):
        return transfer_line('Packing', sub['pack'])
    if step == 'uploading':
        if sub.get('upload'):
            return upload_line(sub['upload'])
        pack = sub.get('pack') or {}
        if (pack.get('bytesDone') or 0) < (pack.get('bytesTotal') or 0):
            # Before a single PUT the daemon writes the zip, reported as the submission's `pack`.
            return transfer_line('Zipping', pack)
        total = sub.get('totalBytes') or 0
        if total:
            return transfer_line('Uploading', {'bytesDone': sub.get('uploadedBytes') or 0, 'bytesTotal': total})
    return None
