// What config.toml may hold, checked with zod: a strict shape, so a misspelt key is an error
// rather than a setting silently ignored. Values stay as written (a bare service origin, `~/`
// paths); settings.ts turns them into what the programs use.
import { z } from 'zod';
import { OutputFormat } from '../shared/api/enums.js';
import { RequestedRenderConfig } from '../shared/api/render-config.js';

/** A profile name: it becomes a TOML key and part of a keychain account name. */
export const ProfileName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
    'letters, digits, "-" and "_" (at most 64), starting with a letter or digit',
  );

const httpUrl = z
  .string()
  .refine((v) => /^https?:\/\/[^/\s]+/i.test(v), 'a URL with http:// or https://, e.g. http://farm:8420');

export const Profile = z.strictObject({
  /** Service origin (`http://farm:8420`) or API root (ending in /api/external/v1). */
  serviceUrl: httpUrl.optional(),
  downloadsDir: z.string().min(1).optional(),
  hotFolder: z.string().min(1).optional(),
  blender: z.string().min(1).optional(),
  outputFormat: OutputFormat.optional(),
  video: z.boolean().optional(),
  /** Default requestedRenderConfig fields of every submission. */
  overrides: RequestedRenderConfig.partial().optional(),
});
export type Profile = z.infer<typeof Profile>;

export const ConfigData = z.strictObject({
  /** The profile used when neither --profile nor RENDERBRIDGE_PROFILE names one. Default `default`. */
  defaultProfile: ProfileName.optional(),
  profiles: z.record(ProfileName, Profile).optional(),
});
export type ConfigData = z.infer<typeof ConfigData>;

/** The profile used when nothing names one; its API key is today's single keychain entry. */
export const DEFAULT_PROFILE = 'default';
