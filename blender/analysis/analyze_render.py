# The render settings section of analyze.py (same folder, imported by it): engine, frames, output
# format and its settings, samples, devices and denoising, as the spec's scene metadata fields.
# `warn(code, blocking, message)` as in analyze.py, which wraps the call.


ENGINES = ('CYCLES', 'BLENDER_EEVEE', 'BLENDER_EEVEE_NEXT', 'BLENDER_WORKBENCH')
FORMATS = ('PNG', 'JPEG', 'JPEG2000', 'BMP', 'TARGA', 'TARGA_RAW', 'TIFF', 'OPEN_EXR', 'OPEN_EXR_MULTILAYER',
           'HDR', 'WEBP', 'FFMPEG', 'AVI_JPEG', 'AVI_RAW')
MOVIE_FORMATS = ('FFMPEG', 'AVI_JPEG', 'AVI_RAW')
EXR_CODECS = ('NONE', 'PXR24', 'ZIP', 'PIZ', 'RLE', 'ZIPS', 'B44', 'B44A', 'DWAA', 'DWAB')
TIFF_CODECS = ('NONE', 'DEFLATE', 'LZW', 'PACKBITS')


def g(obj, attr, default=None):
    """getattr that also survives RNA errors on odd data."""
    try:
        return getattr(obj, attr, default)
    except Exception:
        return default


def media_type(settings):
    mt = g(settings, 'media_type')
    if mt in ('IMAGE', 'MULTI_LAYER_IMAGE', 'VIDEO'):
        return mt
    fmt = g(settings, 'file_format')
    return 'MULTI_LAYER_IMAGE' if fmt == 'OPEN_EXR_MULTILAYER' else 'VIDEO' if fmt in MOVIE_FORMATS else 'IMAGE'


def output_settings(ims):
    fmt = ims.file_format
    out = {'colorMode': ims.color_mode}
    if ims.color_depth in ('8', '10', '12', '16', '32'):
        out['colorDepth'] = ims.color_depth
    if fmt in ('OPEN_EXR', 'OPEN_EXR_MULTILAYER') and g(ims, 'exr_codec') in EXR_CODECS:
        out['exrCodec'] = ims.exr_codec
    if fmt == 'TIFF' and g(ims, 'tiff_codec') in TIFF_CODECS:
        out['tiffCodec'] = ims.tiff_codec
    if fmt == 'PNG':
        out['compression'] = ims.compression
    if fmt in ('JPEG', 'JPEG2000', 'WEBP'):
        out['quality'] = ims.quality
    return out


def render_settings(scene, res, warn):
    r, ims, engine = scene.render, scene.render.image_settings, scene.render.engine
    cy = g(scene, 'cycles')
    res['renderFrameRange'] = [scene.frame_start, scene.frame_end]
    res['frameStep'] = scene.frame_step
    res['resolution'] = [r.resolution_x, r.resolution_y]
    res['resolutionPercentage'] = r.resolution_percentage
    res['fps'] = r.fps
    res['fpsBase'] = float(r.fps_base)
    if engine in ENGINES:
        res['renderEngine'] = engine
    else:
        warn('UNSUPPORTED_ENGINE', True, 'Render engine %r is not supported; use CYCLES, BLENDER_EEVEE or '
             'BLENDER_WORKBENCH.' % engine)
    fmt = ims.file_format
    if fmt in FORMATS:
        res['outputFormat'] = fmt
    else:
        warn('UNSUPPORTED_OUTPUT_FORMAT', False, 'Output format %s is not supported; frames are written as PNG.' % fmt)
    if fmt in MOVIE_FORMATS:
        warn('MOVIE_OUTPUT_FORMAT', False, 'Output format %s is a movie; renders write PNG frames (ask for '
             'videoOutput to get an MP4).' % fmt)
    res['outputMediaType'] = media_type(ims)
    res['outputSettings'] = output_settings(ims)
    res['persistentDataEnabled'] = bool(r.use_persistent_data)
    res['useCompositing'] = bool(r.use_compositing)
    res['useSingleLayer'] = bool(r.use_single_layer)
    cdev = g(r, 'compositor_device', 'CPU')  # Blender 4.2+
    res['compositorDevice'] = cdev if cdev in ('CPU', 'GPU') else 'CPU'
    eevee = g(scene, 'eevee')
    if engine == 'CYCLES' and cy is not None:
        res['samples'] = cy.samples
        res['motionBlurEnabled'] = bool(r.use_motion_blur)
    elif engine.startswith('BLENDER_EEVEE') and eevee is not None:
        res['samples'] = eevee.taa_render_samples
        res['motionBlurEnabled'] = bool(g(eevee, 'use_motion_blur', r.use_motion_blur))
    else:
        aa = g(g(scene, 'display'), 'render_aa', '')
        if str(aa).isdigit():
            res['samples'] = int(aa)
        res['motionBlurEnabled'] = bool(r.use_motion_blur)
    if cy is not None:
        res['renderDevice'] = cy.device if cy.device in ('CPU', 'GPU') else 'CPU'
        res['useTiling'] = bool(g(cy, 'use_auto_tile', False))
        res['tileSize'] = g(cy, 'tile_size', 2048)
        res['denoisingEnabled'] = engine == 'CYCLES' and bool(cy.use_denoising)
        res['denoisingUseGpu'] = bool(g(cy, 'denoising_use_gpu', False))
        res['denoisingDevice'] = 'GPU' if res['denoisingUseGpu'] else 'CPU'
        if cy.denoiser in ('OPTIX', 'OPENIMAGEDENOISE'):
            res['denoiserType'] = cy.denoiser
        res['denoisingPrefilter'] = str(g(cy, 'denoising_prefilter', ''))
        res['denoisingInputPasses'] = str(g(cy, 'denoising_input_passes', ''))
        if g(cy, 'denoising_quality') is not None:
            res['denoisingQuality'] = str(cy.denoising_quality)
