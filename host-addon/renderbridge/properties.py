# The per-scene render settings of the panel (saved in the .blend) and the add-ons offered for bundling.
import bpy

FORMATS = [
    ('DEFAULT', 'Default', 'The default of the add-on preferences'),
    ('SCENE', 'As in the file', "Keep the scene's own output format"),
    ('PNG', 'PNG', ''),
    ('JPEG', 'JPEG', ''),
    ('OPEN_EXR', 'OpenEXR', ''),
    ('OPEN_EXR_MULTILAYER', 'OpenEXR Multilayer', ''),
    ('TIFF', 'TIFF', ''),
    ('WEBP', 'WebP', ''),
]
VIDEO = [
    ('DEFAULT', 'Default', 'The default of the add-on preferences'),
    ('ON', 'MP4', 'Also make an MP4 of the frames'),
    ('OFF', 'No MP4', 'Frames only'),
]


def _is_camera(_self, obj):
    return obj.type == 'CAMERA'


class RENDERBRIDGE_PG_addon(bpy.types.PropertyGroup):
    """An enabled add-on that is not bundled with Blender: a candidate to send with the project."""
    module: bpy.props.StringProperty()
    label: bpy.props.StringProperty()
    path: bpy.props.StringProperty(subtype='FILE_PATH')
    addon_type: bpy.props.StringProperty(default='addon')
    selected: bpy.props.BoolProperty(name='Bundle', default=True, description='Send this add-on with the project')


class RENDERBRIDGE_PG_settings(bpy.types.PropertyGroup):
    frame_mode: bpy.props.EnumProperty(
        name='Frames',
        items=[('SCENE', 'Scene range', "The scene's frame range"), ('CUSTOM', 'Custom', 'Frame ranges typed below')],
        default='SCENE')
    frame_ranges: bpy.props.StringProperty(
        name='Ranges', default='1-10', description='Frame ranges: N, A-B or A-BxSTEP, separated by commas')
    camera: bpy.props.PointerProperty(
        name='Camera', type=bpy.types.Object, poll=_is_camera, description="Camera to render (empty: the scene's)")
    view_layer: bpy.props.StringProperty(
        name='View layer', description='View layer to render (empty: every enabled one)')
    output_format: bpy.props.EnumProperty(name='Format', items=FORMATS, default='DEFAULT')
    video: bpy.props.EnumProperty(name='MP4', items=VIDEO, default='DEFAULT')
    notes: bpy.props.StringProperty(name='Notes', description='Notes sent with the job')
    priority: bpy.props.IntProperty(
        name='Priority', default=50, min=0, max=100,
        description='Higher renders first on a shared farm (0-100; default 50)')
    preview_frames: bpy.props.BoolProperty(
        name='Preview frames first', default=True,
        description='Render the first, middle and last frames before the others, to spot a problem early')
    required_tags: bpy.props.StringProperty(
        name='Required tags',
        description='Worker tags the job needs, separated by commas (e.g. gpu:a4000, site:paris); '
                    'only workers with every one render it. Empty: any worker')
    addons: bpy.props.CollectionProperty(type=RENDERBRIDGE_PG_addon)


CLASSES = (RENDERBRIDGE_PG_addon, RENDERBRIDGE_PG_settings)


def register():
    bpy.types.Scene.renderbridge = bpy.props.PointerProperty(type=RENDERBRIDGE_PG_settings)


def unregister():
    del bpy.types.Scene.renderbridge
