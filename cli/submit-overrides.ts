// The render settings a TD overrides on `renderbridge submit` (--samples, --resolution, ...):
// each flag checked against the field of RequestedRenderConfig it sets, so a bad value is a usage
// error naming the flag before anything is packed or uploaded. A flag beats the same field of the
// active profile's `overrides` (daemon/submit/defaults.ts).
import { InvalidArgumentError, type Command } from 'commander';
import type { z } from 'zod';
import type { SubmitSettings } from '../shared/daemon/submission-schemas.js';
import { ColorManagementPreset, ComputeDeviceType } from '../shared/api/enums.js';
import { ValidationConfig } from '../shared/api/job.js';
import { RequestedRenderConfig } from '../shared/api/render-config.js';

export interface RenderOverrides {
  samples?: number;
  resolution?: [number, number];
  resolutionPercentage?: number;
  device?: z.infer<typeof ComputeDeviceType>;
  gpus?: number;
  blenderVersion?: string;
  colorManagement?: z.infer<typeof ColorManagementPreset>;
  notes?: string;
  scene?: string;
  denoise?: boolean;
}

const F = RequestedRenderConfig.shape;

/** A commander argument parser from the zod schema of the field; the message is zod's first issue. */
function by<T>(schema: z.ZodType<T>, read: (v: string) => unknown = (v) => v): (v: string) => T {
  return (v) => {
    const parsed = schema.safeParse(read(v));
    if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues[0]?.message ?? 'invalid value');
    return parsed.data;
  };
}

const number = (v: string): unknown => (v.trim() === '' ? Number.NaN : Number(v));

const parseResolution = by(F.resolution.unwrap(), (v) => {
  const m = /^(\d+)[xX](\d+)$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError('use WIDTHxHEIGHT, e.g. 1920x1080');
  return [Number(m[1]), Number(m[2])];
});

export function withRenderOverrides(cmd: Command): Command {
  return cmd
    .option(
      '--samples <n>',
      "render samples (1-65536; default: profile: overrides.sampleCount, else the file's)",
      by(F.sampleCount.unwrap(), number),
    )
    .option(
      '--resolution <WxH>',
      'output size in pixels, e.g. 1920x1080 (each side 4-65536; default: profile: overrides.resolution, ' +
        "else the file's)",
      parseResolution,
    )
    .option(
      '--resolution-percentage <n>',
      "scale of the resolution, percent (1-1000; default: profile: overrides.resolutionPercentage, else the file's)",
      by(F.resolutionPercentage.unwrap(), number),
    )
    .option(
      '--device <type>',
      `compute device (${ComputeDeviceType.options.join(', ')}; default: profile: overrides.computeDeviceType, ` +
        "else the service's)",
      by(ComputeDeviceType, (v) => v.toUpperCase()),
    )
    .option(
      '--gpus <n>',
      "GPUs a worker uses (0-16; default: profile: overrides.gpuCount, else the service's)",
      by(F.gpuCount.unwrap(), number),
    )
    .option(
      '--blender-version <version>',
      'Blender version to render with, e.g. 4.2 or 3.4.1 (default: profile: overrides.hostVersionForRender, ' +
        "else the service's)",
      by(F.hostVersionForRender.unwrap()),
    )
    .option(
      '--color-management <preset>',
      `color management (${ColorManagementPreset.options.join(', ')}; default: profile: ` +
        'overrides.colorManagementPreset, else default)',
      by(ColorManagementPreset, (v) => v.toLowerCase()),
    )
    .option(
      '--notes <text>',
      'free text stored with the job (up to 4000 characters; default: profile: overrides.notes)',
      by(F.notes.unwrap()),
    )
    .option(
      '--scene <name>',
      "scene to render (default: the file's active scene)",
      by(ValidationConfig.shape.sceneToRender.unwrap()),
    )
    .option('--denoise', 'turn denoising on (default: profile: overrides.denoisingEnabled, else as the file says)')
    .option('--no-denoise', 'turn denoising off');
}

/** The overrides as submit settings: render fields under `renderConfig`, the scene under `validationConfig`. */
export function overrideSettings(o: RenderOverrides): Pick<SubmitSettings, 'renderConfig' | 'validationConfig'> {
  const renderConfig: NonNullable<SubmitSettings['renderConfig']> = {
    ...(o.samples !== undefined ? { sampleCount: o.samples } : {}),
    ...(o.resolution !== undefined ? { resolution: o.resolution } : {}),
    ...(o.resolutionPercentage !== undefined ? { resolutionPercentage: o.resolutionPercentage } : {}),
    ...(o.device !== undefined ? { computeDeviceType: o.device } : {}),
    ...(o.gpus !== undefined ? { gpuCount: o.gpus } : {}),
    ...(o.blenderVersion !== undefined ? { hostVersionForRender: o.blenderVersion } : {}),
    ...(o.colorManagement !== undefined ? { colorManagementPreset: o.colorManagement } : {}),
    ...(o.notes !== undefined ? { notes: o.notes } : {}),
    ...(o.denoise !== undefined ? { denoisingEnabled: o.denoise } : {}),
  };
  return {
    ...(Object.keys(renderConfig).length > 0 ? { renderConfig } : {}),
    ...(o.scene !== undefined ? { validationConfig: { sceneToRender: o.scene } } : {}),
  };
}
