# "Check", "Estimate" and "Render on farm": save, collect the dependencies (bpy, main thread), report
# missing files before anything is uploaded, then pack and submit through the daemon on the worker
# thread. Render on farm after a ready Estimate of the same file and settings renders that job instead:
# nothing is packed or uploaded again, and the farm keeps the sampled frames.
import os

import bpy

from . import addon_prefs, addons, dependencies, estimate_text, jobs_state, session, submit_body


def settings_body(context):
    """The SubmitSettings of the scene's panel settings and the preferences' defaults (ValueError when bad)."""
    scene = context.scene
    rb = scene.renderbridge
    prefs = addon_prefs.get(context)
    if rb.frame_mode == 'CUSTOM':
        frames = submit_body.parse_frame_ranges(rb.frame_ranges)
    else:
        whole = scene.frame_end > scene.frame_start
        frames = [f'{scene.frame_start}-{scene.frame_end}' if whole else str(scene.frame_start)]
        if scene.frame_step > 1:
            frames = [f'{scene.frame_start}-{scene.frame_end}x{scene.frame_step}']
    fmt = prefs.default_format if rb.output_format == 'DEFAULT' else rb.output_format
    video = prefs.default_video if rb.video == 'DEFAULT' else rb.video == 'ON'
    if rb.view_layer and rb.view_layer not in scene.view_layers:
        raise ValueError(submit_body.no_view_layer(rb.view_layer, scene.name))
    return submit_body.build_settings(
        frames=frames, camera=rb.camera.name if rb.camera else '', view_layer=rb.view_layer,
        output_format='' if fmt == 'SCENE' else fmt, video=video, notes=rb.notes,
        priority=rb.priority, preview_frames=rb.preview_frames,
        required_tags=submit_body.parse_required_tags(rb.required_tags))


class _Submit:
    bl_options = {'REGISTER'}
    mode = 'render'

    allow_missing: bpy.props.BoolProperty(
        name='Continue with missing files', default=False, options={'SKIP_SAVE'},
        description='Upload even though some files the scene uses are missing')

    @classmethod
    def poll(cls, context):
        s = session.current()
        return s is not None and not s.busy

    def invoke(self, context, event):
        plan = submit_body.save_plan(bpy.data.filepath, bpy.data.is_dirty)
        if plan == 'save_as' and not bpy.app.background:
            bpy.ops.wm.save_as_mainfile('INVOKE_DEFAULT')
            self.report({'WARNING'}, submit_body.save_first(self.bl_label))
            return {'CANCELLED'}
        if plan == 'save' and not bpy.app.background:
            return context.window_manager.invoke_confirm(self, event)  # "save the changes and go on?"
        return self.execute(context)  # execute saves a dirty file and refuses a never saved one

    def execute(self, context):
        s = session.current()
        refused = addon_prefs.address_problem(context)
        if refused:
            self.report({'ERROR'}, refused)
            return {'CANCELLED'}
        plan = submit_body.save_plan(bpy.data.filepath, bpy.data.is_dirty)
        if plan == 'save_as':
            self.report({'ERROR'}, submit_body.NEVER_SAVED)
            return {'CANCELLED'}
        try:
            settings = settings_body(context)
        except ValueError as err:
            self.report({'ERROR'}, str(err))
            return {'CANCELLED'}
        rb = context.scene.renderbridge
        addons.refresh(context, rb)
        if plan == 'save' or bpy.data.is_dirty:
            # The farm gets the file on disk: save the changes before collecting and packing.
            try:
                bpy.ops.wm.save_mainfile()
            except RuntimeError as err:
                self.report({'ERROR'}, submit_body.could_not_save(bpy.data.filepath, err))
                return {'CANCELLED'}
        if not os.path.isfile(bpy.data.filepath):
            # Saved, but moved or deleted since (a sync tool, another program): the daemon would not find it.
            self.report({'ERROR'}, submit_body.not_on_disk(bpy.data.filepath))
            return {'CANCELLED'}
        blend = os.path.abspath(bpy.data.filepath)
        mtime = os.stat(blend).st_mtime_ns
        out_dir = None
        if self.mode == 'render':
            downloads = bpy.path.abspath(addon_prefs.get(context).download_folder)
            out_dir = submit_body.output_folder(downloads, bpy.data.filepath)
            if s.estimated is not None and s.estimated.reusable(settings, blend, mtime):
                s.render_estimated(jobs_state.Activity('render'), settings, out_dir)
                self.report({'INFO'}, 'Render on farm: rendering the estimated job (nothing uploaded again)...')
                return {'FINISHED'}
        act = jobs_state.Activity(self.mode)
        if self.mode == 'estimate':
            act.plan = estimate_text.Plan(settings, blend, mtime)
        s.activity = act
        collected = dependencies.collect()
        act.missing = submit_body.missing_files(collected['dependencies'])
        if act.missing and not self.allow_missing:
            act.step = 'missing'
            act.message = submit_body.describe_missing(act.missing) + ': nothing was uploaded.'
            act.finished = True
            self.report({'WARNING'}, act.message + ' Fix the paths, or choose "Continue anyway".')
            return {'CANCELLED'}
        act.step, act.message = 'packing', session.STEP_TEXT['packing']
        s.submit(act, blend, collected['dependencies'], addons.to_bundle(rb), settings, out_dir)
        if act.missing:
            self.report({'WARNING'}, submit_body.describe_missing(act.missing) + ': uploading anyway.')
        self.report({'INFO'}, f'{self.bl_label}: packing and uploading through the renderbridge daemon...')
        return {'FINISHED'}


class RENDERBRIDGE_OT_check(_Submit, bpy.types.Operator):
    """Upload the scene and let the farm check it, without rendering: shows the analysis warnings"""
    bl_idname = 'renderbridge.check'
    bl_label = 'Check'
    mode = 'check'


class RENDERBRIDGE_OT_estimate(_Submit, bpy.types.Operator):
    """Upload the scene and let the farm render a few sample frames: time, cost and memory before you render"""
    bl_idname = 'renderbridge.estimate'
    bl_label = 'Estimate'
    mode = 'estimate'


class RENDERBRIDGE_OT_cancel_estimate(bpy.types.Operator):
    """Stop the estimate on the farm (the uploaded job stays, to estimate or render later)"""
    bl_idname = 'renderbridge.cancel_estimate'
    bl_label = 'Cancel estimate'

    @classmethod
    def poll(cls, context):
        s = session.current()
        act = s and s.activity
        return bool(act and act.mode == 'estimate' and act.job_id and not act.finished)

    def execute(self, context):
        session.current().cancel_estimate(session.current().activity)
        return {'FINISHED'}


class RENDERBRIDGE_OT_render(_Submit, bpy.types.Operator):
    """Save, pack and upload the scene, render it on the farm and download the frames"""
    bl_idname = 'renderbridge.render'
    bl_label = 'Render on farm'
    mode = 'render'


class RENDERBRIDGE_OT_refresh_addons(bpy.types.Operator):
    """List the enabled add-ons that do not ship with Blender, to send with the project"""
    bl_idname = 'renderbridge.refresh_addons'
    bl_label = 'Find add-ons'
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        addons.refresh(context, context.scene.renderbridge)
        self.report({'INFO'}, f'{len(context.scene.renderbridge.addons)} add-on(s) can be bundled.')
        return {'FINISHED'}


CLASSES = (RENDERBRIDGE_OT_check, RENDERBRIDGE_OT_estimate, RENDERBRIDGE_OT_cancel_estimate, RENDERBRIDGE_OT_render,
           RENDERBRIDGE_OT_refresh_addons)
