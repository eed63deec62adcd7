// The active profile's submission defaults (outputFormat, video, overrides) under what a
// submission says itself. One rule for the CLI and the daemon (add-on, tray, hot folder): what the
// submission sets (a flag, the add-on's choice in the body) beats the profile's default, which
// beats the service's. The environment is already folded into the defaults by the resolver.
import type { SubmitSettings } from '../../shared/daemon/submission-schemas.js';

export interface SubmitDefaults {
  /** Output format (e.g. PNG); null: none set, the file's. */
  outputFormat: string | null;
  /** Also make a video; null: none set, the service's. */
  video: boolean | null;
  /** requestedRenderConfig fields. */
  overrides: Record<string, unknown>;
}

export function submitDefaultsOf(config: SubmitDefaults): SubmitDefaults {
  return { outputFormat: config.outputFormat, video: config.video, overrides: config.overrides };
}

/**
 * `settings` with the defaults beneath: the defaults become the bottom of `renderConfig`, so the
 * submission's own renderConfig fields and its named settings (format, video, which
 * renderConfigFrom puts over renderConfig) keep winning.
 */
export function withSubmitDefaults(settings: SubmitSettings, defaults: SubmitDefaults): SubmitSettings {
  const below: Record<string, unknown> = {
    ...defaults.overrides,
    ...(defaults.outputFormat !== null ? { outputFormat: defaults.outputFormat } : {}),
    ...(defaults.video !== null ? { videoOutput: defaults.video } : {}),
  };
  if (Object.keys(below).length === 0) return settings;
  return { ...settings, renderConfig: { ...below, ...settings.renderConfig } as SubmitSettings['renderConfig'] };
}
