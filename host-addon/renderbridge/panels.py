# The Renderbridge panel, in Properties > Render and in the 3D View sidebar (same drawing), and the
# farm box of the preferences. Drawing reads the session's plain state only; it never calls the network.
import bpy

from . import estimate_text, farm_status, session, submit_body


def draw_connection(layout, s):
    box = layout.box()
    if s.health is None:
        col = box.column()
        col.alert = True
        col.label(text='Daemon address refused' if s.address_refused else 'Daemon not connected', icon='ERROR')
        for line in wrap(s.connection_error or 'Connecting to the renderbridge daemon...'):
            col.label(text=line)
    elif not s.health.get('apiKeyConfigured'):
        col = box.column()
        col.alert = True
        col.label(text='No API key set', icon='ERROR')
        col.label(text='Store one with the tray app, or set RENDERBRIDGE_API_KEY and restart the daemon.')
    else:
        box.label(text=f"Connected: daemon {s.health.get('version', '')}", icon='CHECKMARK')
        box.label(text=farm_status.farm_of(s.health))
    row = box.row(align=True)
    row.operator('renderbridge.refresh', icon='FILE_REFRESH')
    row.operator('renderbridge.test_connection', icon='LINKED')
    draw_test_result(box, s)


def draw_settings(layout, scene):
    rb = scene.renderbridge
    col = layout.column()
    col.row().prop(rb, 'frame_mode', expand=True)
    if rb.frame_mode == 'CUSTOM':
        col.prop(rb, 'frame_ranges')
    else:
        col.label(text=f'Frames {scene.frame_start}-{scene.frame_end}')
    col.prop(rb, 'camera')
    col.prop_search(rb, 'view_layer', scene, 'view_layers')
    col.prop(rb, 'output_format')
    col.row().prop(rb, 'video', expand=True)
    col.prop(rb, 'notes')
    row = col.row()
    row.prop(rb, 'priority')
    row.prop(rb, 'preview_frames')
    col.prop(rb, 'required_tags')
    sub = layout.box()
    head = sub.row()
    head.label(text='Add-ons to bundle')
    head.operator('renderbridge.refresh_addons', text='', icon='FILE_REFRESH')
    for item in rb.addons:
        sub.prop(item, 'selected', text=f'{item.label} ({item.module})')


def draw_activity(layout, act):
    box = layout.box()
    box.label(text=f'{act.title}: {act.message or act.step}')
    if act.transfer and not act.finished:
        # "Packing 120 MB / 500 MB · 80 MB/s · 5 s left", "Uploading ... (340 MB already on the farm)"
        box.label(text=act.transfer, icon='TIME')
    if act.missing:
        col = box.column()
        col.alert = True
        for dep in act.missing[:10]:
            col.label(text=f"Missing: {dep['path']}", icon='ERROR')
        if act.step == 'missing':
            row = box.row()
            op = row.operator('renderbridge.' + {'check': 'check', 'estimate': 'estimate'}.get(act.mode, 'render'),
                              text='Continue anyway')
            op.allow_missing = True
    for w in act.warnings:
        col = box.column()
        col.alert = w['blocking']
        col.label(text=f"{w['code']}: {w['message']}", icon='CANCEL' if w['blocking'] else 'INFO')
    for text in act.pack_warnings:
        box.label(text=text, icon='INFO')
    draw_estimate(box, act)
    if act.error:
        col = box.column()
        col.alert = True
        for line in wrap(act.error):
            col.label(text=line)


def draw_estimate(box, act):
    """The estimate's figures with their bands and warnings, and Cancel while the farm samples."""
    for text in estimate_text.lines(act.estimate):
        col = box.column()
        col.alert = text.startswith('Warning:') or 'does not fit' in text
        for i, line in enumerate(wrap(text)):
            col.label(text=line, icon='BLANK1' if i else ('ERROR' if col.alert else 'DOT'))
    if act.mode == 'estimate' and act.job_id and not act.finished:
        box.operator('renderbridge.cancel_estimate', icon='CANCEL')


def draw_save_hint(layout):
    """Says before any click that the file must be saved (never saved) or will be (unsaved changes)."""
    hint = submit_body.save_hint(bpy.data.filepath, bpy.data.is_dirty)
    if hint is None:
        return
    col = layout.column()
    col.alert = hint[0] == 'ERROR'
    for i, line in enumerate(wrap(hint[1])):
        col.label(text=line, icon=hint[0] if i == 0 else 'BLANK1')


def draw_jobs(layout, s):
    box = layout.box()
    box.label(text='Recent jobs')
    if s.notice:
        row = box.row()
        row.alert = s.notice[0] == 'ERROR'
        row.label(text=s.notice[1])
    if not s.jobs.rows:
        box.label(text=s.jobs.error or 'No jobs yet')
    for job in s.jobs.rows:
        row = box.row(align=True)
        row.label(text=job.label(), icon='RENDER_ANIMATION' if job.active else 'BLANK1')
        if job.awaiting_approval:
            row.operator('renderbridge.approve_previews', text='Approve', icon='CHECKMARK').job_id = job.id
        if job.cancelable:
            row.operator('renderbridge.cancel_job', text='', icon='CANCEL').job_id = job.id
        if job.status == 'completed':
            row.operator('renderbridge.download_job', text='', icon='IMPORT').job_id = job.id
        if job.out_dir:
            row.operator('renderbridge.open_folder', text='', icon='FILE_FOLDER').path = job.out_dir


def draw(layout, context):
    s = session.current()
    if s is None:
        return
    draw_connection(layout, s)
    draw_settings(layout, context.scene)
    draw_save_hint(layout)
    row = layout.row(align=True)
    row.scale_y = 1.3
    row.operator('renderbridge.check', icon='VIEWZOOM')
    row.operator('renderbridge.estimate', icon='TIME')
    row.operator('renderbridge.render', icon='RENDER_ANIMATION')
    if s.activity is not None:
        draw_activity(layout, s.activity)
    draw_jobs(layout, s)


def draw_farm(layout, s):
    """The farm and profile the daemon uses, Test connection and its last result."""
    if s is None:
        return
    h = s.health
    col = layout.column()
    if h is None:
        col.alert = True
        col.label(text=s.connection_error or 'Connecting to the renderbridge daemon...', icon='ERROR')
    else:
        col.label(text=f"Farm: {h.get('serviceUrl', '')}", icon='WORLD')
        profile = h.get('profile', '')
        col.label(text=f"Profile: {profile} (set in config.toml: renderbridge config, or the tray app's Settings)")
        col.label(text='API key: stored' if h.get('apiKeyConfigured') else 'API key: none for this profile',
                  icon='CHECKMARK' if h.get('apiKeyConfigured') else 'ERROR')
    if getattr(bpy.app, 'online_access', None) is False:
        # Blender 4.2+ with Allow Online Access off: the add-on still talks to the daemon, over
        # loopback only (see daemon_client.py); say so, since the daemon does reach the farm.
        note = layout.column()
        for line in wrap(ONLINE_ACCESS_OFF):
            note.label(text=line)
    layout.operator('renderbridge.test_connection', icon='LINKED')
    draw_test_result(layout, s)


ONLINE_ACCESS_OFF = ("Blender's online access is off: the add-on still talks to the renderbridge daemon on this "
                     'computer (loopback only); the daemon reaches the farm.')


def draw_test_result(layout, s):
    if s.connection_test:
        col = layout.column()
        col.alert = s.connection_test[0] == 'ERROR'
        for line in wrap(s.connection_test[1]):
            col.label(text=line)


def wrap(text, width=70):
    """`text` cut into lines of about `width` characters (Blender labels do not wrap)."""
    words, lines, cur = text.split(), [], ''
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f'{cur} {w}' if cur else w
    return lines + ([cur] if cur else [])


class RENDERBRIDGE_PT_render(bpy.types.Panel):
    bl_label = 'Renderbridge'
    bl_idname = 'RENDERBRIDGE_PT_render'
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = 'render'

    def draw(self, context):
        draw(self.layout, context)


class RENDERBRIDGE_PT_sidebar(bpy.types.Panel):
    bl_label = 'Render farm'
    bl_idname = 'RENDERBRIDGE_PT_sidebar'
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = 'Renderbridge'

    def draw(self, context):
        draw(self.layout, context)


CLASSES = (RENDERBRIDGE_PT_render, RENDERBRIDGE_PT_sidebar)
