# The add-on preferences: where the daemon is, where renders are downloaded, default settings, and
# which farm and profile the daemon uses (from its GET /health, polled by the session) with a Test
# connection button. Drawing reads the session's plain state only; it never calls the network.
import bpy

from . import daemon_client, panels, session
from .properties import FORMATS


class RENDERBRIDGE_AP_preferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    daemon_address: bpy.props.StringProperty(
        name='Daemon address',
        description='e.g. http://127.0.0.1:47615: this computer only (127.0.0.1, ::1 or localhost). Empty: '
                    'found from the daemon state file ($XDG_STATE_HOME/renderbridge/daemon.json), which also '
                    'holds the access token')
    download_folder: bpy.props.StringProperty(
        name='Download folder', subtype='DIR_PATH',
        description="Where rendered frames are downloaded (a folder per render). Empty: the daemon's folder")
    default_format: bpy.props.EnumProperty(
        name='Default format', items=[f for f in FORMATS if f[0] != 'DEFAULT'], default='SCENE')
    default_video: bpy.props.BoolProperty(name='Make an MP4 by default', default=False)

    def draw(self, _context):
        col = self.layout.column()
        col.prop(self, 'daemon_address')
        problem = daemon_client.check_address(self.daemon_address)
        if problem:
            sub = col.column()
            sub.alert = True
            for line in panels.wrap(problem):
                sub.label(text=line)
        col.prop(self, 'download_folder')
        col.prop(self, 'default_format')
        col.prop(self, 'default_video')
        col.label(text='The API key is kept by the daemon (tray app or RENDERBRIDGE_API_KEY), never here.', icon='INFO')
        panels.draw_farm(self.layout.box(), session.current())


CLASSES = (RENDERBRIDGE_AP_preferences,)
