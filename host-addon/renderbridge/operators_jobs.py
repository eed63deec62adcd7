# Actions on the recent jobs (Cancel, Download, Open folder) and on the connection (Refresh, Test
# connection).
# Cancel and Download run on the worker thread; their outcome shows in the panel.
import os

import bpy

from . import addon_prefs, opener, session


def _job_id_prop():
    return bpy.props.StringProperty(name='Job id', options={'SKIP_SAVE'})


def _refused(op, context):
    """Reports the refused daemon address (not loopback), True when the daemon must not be called."""
    problem = addon_prefs.address_problem(context)
    if problem:
        op.report({'ERROR'}, problem)
    return problem is not None


class RENDERBRIDGE_OT_cancel_job(bpy.types.Operator):
    """Cancel this job on the farm"""
    bl_idname = 'renderbridge.cancel_job'
    bl_label = 'Cancel'
    job_id: _job_id_prop()

    def execute(self, context):
        if _refused(self, context):
            return {'CANCELLED'}
        session.current().job_action('cancel', self.job_id)
        self.report({'INFO'}, f'Canceling job {self.job_id[:8]}...')
        return {'FINISHED'}


class RENDERBRIDGE_OT_approve_previews(bpy.types.Operator):
    """Approve the preview frames: the farm renders the other frames of this job"""
    bl_idname = 'renderbridge.approve_previews'
    bl_label = 'Approve previews'
    job_id: _job_id_prop()

    def execute(self, context):
        if _refused(self, context):
            return {'CANCELLED'}
        session.current().job_action('approve', self.job_id)
        self.report({'INFO'}, f'Approving the previews of job {self.job_id[:8]}...')
        return {'FINISHED'}


class RENDERBRIDGE_OT_download_job(bpy.types.Operator):
    """Download this job's outputs (complete files are skipped)"""
    bl_idname = 'renderbridge.download_job'
    bl_label = 'Download'
    job_id: _job_id_prop()

    def execute(self, context):
        if _refused(self, context):
            return {'CANCELLED'}
        s = session.current()
        root = bpy.path.abspath(addon_prefs.get(context).download_folder)
        row = s.jobs.find(self.job_id)
        out_dir = None
        if root:
            name = f'{row.name if row else "job"}-{self.job_id[:8]}'
            out_dir = row.out_dir if row and row.out_dir else os.path.join(root, name)
        s.job_action('download', self.job_id, out_dir)
        self.report({'INFO'}, f'Downloading job {self.job_id[:8]}...')
        return {'FINISHED'}


class RENDERBRIDGE_OT_open_folder(bpy.types.Operator):
    """Open the folder the outputs were downloaded to"""
    bl_idname = 'renderbridge.open_folder'
    bl_label = 'Open folder'
    path: bpy.props.StringProperty(subtype='DIR_PATH', options={'SKIP_SAVE'})

    def execute(self, _context):
        try:
            opened = opener.open_folder(bpy.path.abspath(self.path))
        except opener.OpenFolderError as err:
            self.report({'ERROR'}, str(err))
            return {'CANCELLED'}
        self.report({'INFO'}, f'Opened {opened[-1]}')
        return {'FINISHED'}


class RENDERBRIDGE_OT_refresh(bpy.types.Operator):
    """Ask the daemon again now (connection and jobs)"""
    bl_idname = 'renderbridge.refresh'
    bl_label = 'Refresh'

    def execute(self, _context):
        session.current().refresh_now()
        return {'FINISHED'}


class RENDERBRIDGE_OT_test_connection(bpy.types.Operator):
    """Ask the daemon to reach its farm with its API key; the result shows under the button"""
    bl_idname = 'renderbridge.test_connection'
    bl_label = 'Test connection'

    def execute(self, context):
        if _refused(self, context):
            return {'CANCELLED'}
        session.current().test_connection()
        return {'FINISHED'}


CLASSES = (RENDERBRIDGE_OT_cancel_job, RENDERBRIDGE_OT_approve_previews, RENDERBRIDGE_OT_download_job,
           RENDERBRIDGE_OT_open_folder,
           RENDERBRIDGE_OT_refresh, RENDERBRIDGE_OT_test_connection)
