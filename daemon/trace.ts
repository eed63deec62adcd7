// The daemon's tracer: lists a .blend's external files with Blender (blender/trace) and says what
// a failure means for a pack. Without Blender the file is packed as it is, with a BLENDER_NOT_FOUND
// warning; any other failure is PACK_FAILED.
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { BlenderCanceledError, BlenderError, BlenderRunError, BlenderStartError } from '../blender/errors.js';
import { traceDependencies } from '../blender/trace/trace-dependencies.js';
import { DaemonError } from './errors.js';
import type { TraceFn } from './ports.js';

export interface TracerDeps {
  /**
   * Blender executable (RENDERBRIDGE_BLENDER / --blender); a function is read at each trace (the
   * daemon's follows config.toml).
   */
  blender: string | (() => string);
  /** Whole-run limit. Default 120000 ms. */
  timeoutMs?: number;
}

export const BLENDER_NOT_FOUND_WARNING = {
  code: 'BLENDER_NOT_FOUND',
  message:
    'Blender was not found (set RENDERBRIDGE_BLENDER or --blender): the .blend is packed without its external files.',
} as const;

export function createTracer(deps: TracerDeps): TraceFn {
  const timeoutMs = deps.timeoutMs ?? 120_000;
  return async (blendFile, options = {}) => {
    const file = resolve(blendFile);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile())
      throw new DaemonError('PACK_FAILED', `${file} is not a file: give the path of an existing .blend.`, { file });
    try {
      const blender = typeof deps.blender === 'function' ? deps.blender() : deps.blender;
      const dependencies = await traceDependencies({
        blender,
        file,
        timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return { dependencies, warnings: [] };
    } catch (err) {
      if (err instanceof BlenderCanceledError) throw options.signal?.reason ?? err;
      if (err instanceof BlenderStartError && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
        return { dependencies: [], warnings: [{ ...BLENDER_NOT_FOUND_WARNING }] };
      }
      if (err instanceof BlenderRunError) {
        throw new DaemonError(
          'PACK_FAILED',
          `Listing the files of ${basename(file)} with Blender failed: ${err.message}.`,
          { file },
        );
      }
      // Blender ran but gave no usable list (an unreadable file, a bad or foreign list).
      if (err instanceof BlenderError) throw new DaemonError('PACK_FAILED', err.message, err.details);
      throw err;
    }
  };
}
