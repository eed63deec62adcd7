// Analysis and render warnings in words: what each code means for the render and what to do.
// The codes are the ones the analysis (blender/analysis/) and render planning
// (service/domain/final-config.ts, the worker's handlers) write; docs/reference/api-decisions.md's "Validation" and
// "Render planning" bullets list them.

const ADVICE = {
  SCENE_NOT_FOUND:
    'The scene to render is not in the file. Check the scene name chosen for validation (sceneToRender), or ' +
    'leave it empty to render the active scene.',
  NO_CAMERA:
    'The scene has no camera, so nothing can be rendered. Add a camera in Blender, make it the scene camera, ' +
    'save and submit again.',
  UNSUPPORTED_ENGINE:
    'The scene uses a render engine the farm does not have (often an add-on engine). Switch to Cycles, EEVEE ' +
    "or Workbench, or bundle the engine's add-on with the project.",
  NO_VIEW_LAYER_ENABLED:
    'Every view layer is turned off for rendering. Enable "Use for Rendering" on at least one view layer.',
  MISSING_LIBRARIES:
    'Linked .blend libraries are missing from the upload. Pack the project with renderbridge (which collects ' +
    'linked files) or include them in the zip at the same relative paths.',
  MISSING_FILES:
    'Some files the scene uses (textures, sounds, fonts) were not in the upload; they will render missing ' +
    '(often pink). Pack the project with renderbridge, or use File > External Data > Pack Resources in ' +
    'Blender.',
  MISSING_CACHE:
    'A simulation or geometry cache is missing, so it will be recomputed or render empty. Bake the cache and ' +
    'include its folder in the upload.',
  DENOISER_UNAVAILABLE:
    'The Blender on the farm has no denoiser for this device, so denoising is turned off: expect more noise. ' +
    'Raise the sample count, or ask for a build with OpenImageDenoise.',
  NO_ACTIVE_CAMERA:
    'The scene has cameras but none is active; the first one is used. Set the scene camera in Blender if ' +
    'that is not the one you want.',
  FILE_NEWER_THAN_BLENDER:
    'The file was saved by a newer Blender than the farm renders with; newer features may be lost. Save it ' +
    "with the farm's version, or ask for a newer build on the farm.",
  AUTOEXEC_DISABLED:
    'The file has Python drivers or scripts; renders run with scripts disabled, so they will not run. Bake ' +
    'driven values to keyframes if the render depends on them.',
  MOVIE_OUTPUT_FORMAT:
    'The scene writes a movie; the farm renders frames (PNG) and can make an MP4 from them. Ask for a video ' +
    'output with the job if you want one.',
  MOVIE_FORMAT_NORMALISED:
    'The movie output format was changed to PNG frames for rendering on several machines; ask for a video ' +
    'output to get an MP4 as well.',
  UNSUPPORTED_OUTPUT_FORMAT:
    'The output format cannot be rendered here and was replaced by PNG. Choose PNG, OpenEXR, JPEG or TIFF to ' +
    'get what you expect.',
  ANALYSIS_FIELD_DROPPED:
    'A detail of the scene could not be described and was left out of the analysis. The render is not ' +
    'affected; report it if something looks wrong.',
  ANALYSIS_SECTION_FAILED:
    'Part of the scene analysis failed. The render may still work; check the message and the file if the ' +
    'result looks wrong.',
  PATHS_NOT_REMAPPED:
    'Some file paths could not be rewritten to the packed project, so those files may be missing on the ' +
    'farm. Check the paths named and pack again.',
  ADDON_REFUSED:
    'This farm does not run add-ons bundled with projects, so the render goes on without them. Apply or bake ' +
    "what they add in the .blend, or ask the farm's operator.",
  ADDON_REQUIRED:
    'The scene needs an add-on the render will not enable. Add it to the add-ons to use when validating, or ' +
    'bundle it with the project.',
  DEVICE_UNAVAILABLE:
    'The farm has no GPU of the kind asked for, so this job renders on the CPU (slower). Ask for another ' +
    'device, or accept the CPU render.',
  GPU_COUNT_REDUCED:
    'Each render chunk uses one GPU; several chunks render side by side instead, so more GPUs still speed the job up.',
  GPU_COUNT_IGNORED: 'GPUs were asked for a CPU render, so the count is ignored.',
  DEVICE_FALLBACK: 'Some runs planned on a GPU found none and rendered on the CPU; they were billed at the CPU rate.',
  BLENDER_VERSION_SUBSTITUTED:
    'The Blender version asked for is not installed; the closest newer one renders instead. Check the ' +
    'result, or ask the farm for that version.',
  RENDER_SETUP_WARNING:
    'Blender could not apply a render setting (an add-on that failed to load, a colour management preset the ' +
    'build lacks). The render went on without it.',
};

/** What to do about a warning, in words; a generic line for a code this page does not know yet. */
export function adviceFor(code) {
  return ADVICE[code] || 'Read the message; if the render does not look as expected, fix the scene and submit again.';
}

/** Every warning of a job, each once: the analysis's, the render plan's, and the blocking ones that failed it. */
export function warningsOf(job) {
  const all = [
    ...((job.analysis && job.analysis.output && job.analysis.output.analysisWarnings) || []),
    ...((job.finalConfig && job.finalConfig.analysisWarnings) || []),
    ...((job.failedReason &&
      job.failedReason.errorDetails &&
      Array.isArray(job.failedReason.errorDetails.warnings) &&
      job.failedReason.errorDetails.warnings) ||
      []),
  ];
  const seen = new Set();
  return all.filter((w) => {
    if (!w || typeof w.code !== 'string') return false;
    const key = `${w.code}\n${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
