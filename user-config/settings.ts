// The settings a person can set, each with its variable, its flag and its default, and the one
// parser that turns a raw value (a flag's or variable's string, a file's TOML value) into what
// the programs use. A value the parser refuses is an error, never replaced by the default.
import path from 'node:path';
import { OutputFormat } from '../shared/api/enums.js';
import { RequestedRenderConfig } from '../shared/api/render-config.js';
import { API_PREFIX } from '../shared/constants.js';
import { normalizeServiceUrl } from '../shared/service-url.js';
import { DAEMON_DEFAULT_PORT } from '../shared/daemon/api.js';

export interface SettingValues {
  /**
   * Service API root, ending in /api/external/v1 (a bare origin gets the prefix). Default
   * `http://127.0.0.1:8420/api/external/v1` (the bundled service). Env RENDERBRIDGE_SERVICE_URL.
   */
  serviceUrl: string;
  /** Parent of the per-job output folders. Default `~/renderbridge-outputs`. Env RENDERBRIDGE_DOWNLOADS. */
  downloadsDir: string;
  /** Watched folder: a .blend or .zip written there is submitted. Default none. Env RENDERBRIDGE_HOT_FOLDER. */
  hotFolder: string | null;
  /** Blender used to trace a .blend's dependencies. Default `blender` on PATH. Env RENDERBRIDGE_BLENDER. */
  blender: string;
  /**
   * Output format of a submission that names none (e.g. PNG). Default none: the file's. Env RENDERBRIDGE_OUTPUT_FORMAT.
   */
  outputFormat: string | null;
  /** Whether a submission that does not say also makes a video. Default none: the service's. Env RENDERBRIDGE_VIDEO. */
  video: boolean | null;
  /** requestedRenderConfig fields of every submission, under what the submission itself sets. Default none. */
  overrides: Record<string, unknown>;
  /** The daemon's port on 127.0.0.1. Default 47615; 0 picks a free one. Env RENDERBRIDGE_DAEMON_PORT. */
  daemonPort: number;
  /**
   * Seconds a lost connection to the service is waited for before a submission fails. Default 120; 0: a few quick
   * retries. Env RENDERBRIDGE_RECONNECT_PATIENCE.
   */
  reconnectPatience: number;
}
export type SettingName = keyof SettingValues;

export interface SettingDef<K extends SettingName> {
  /** Environment variable, if any. */
  env?: string;
  /** Command-line flag, if any (as shown in sources: `--service`). */
  flag?: string;
  /** Whether a profile may set it. */
  inProfile: boolean;
  help: string;
  default(home: string): SettingValues[K];
  /** Throws an Error saying what is wrong (the resolver adds the setting and the source). */
  parse(raw: unknown, home: string): SettingValues[K];
}

function text(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw new Error('expected a non-empty text');
  return raw.trim();
}

/** `~/x` is taken from the home folder; anything else as given, made absolute. */
function folder(raw: unknown, home: string): string {
  const t = text(raw);
  return t === '~' || t.startsWith('~/') ? path.join(home, t.slice(1)) : path.resolve(t);
}

function boolean(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  const t = text(raw).toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(t)) return true;
  if (['false', '0', 'no', 'off'].includes(t)) return false;
  throw new Error(`"${String(raw)}" is not true or false`);
}

export const SETTINGS: { [K in SettingName]: SettingDef<K> } = {
  serviceUrl: {
    env: 'RENDERBRIDGE_SERVICE_URL',
    flag: '--service',
    inProfile: true,
    help: 'service origin or API root',
    default: () => `http://127.0.0.1:8420${API_PREFIX}`,
    parse: (raw) => normalizeServiceUrl(text(raw)),
  },
  downloadsDir: {
    env: 'RENDERBRIDGE_DOWNLOADS',
    flag: '--downloads',
    inProfile: true,
    help: 'parent of the per-job output folders',
    default: (home) => path.join(home, 'renderbridge-outputs'),
    parse: folder,
  },
  hotFolder: {
    env: 'RENDERBRIDGE_HOT_FOLDER',
    flag: '--hot-folder',
    inProfile: true,
    help: 'watched folder: a .blend or .zip written there is submitted',
    default: () => null,
    parse: folder,
  },
  blender: {
    env: 'RENDERBRIDGE_BLENDER',
    flag: '--blender',
    inProfile: true,
    help: 'Blender used to trace dependencies',
    default: () => 'blender',
    parse: (raw, home) => (/[/\\~]/.test(text(raw)) ? folder(raw, home) : text(raw)),
  },
  outputFormat: {
    env: 'RENDERBRIDGE_OUTPUT_FORMAT',
    flag: '--format',
    inProfile: true,
    help: 'default output format of submissions',
    default: () => null,
    parse: (raw) => {
      const r = OutputFormat.safeParse(typeof raw === 'string' ? raw.trim().toUpperCase() : raw);
      if (!r.success) throw new Error(`"${String(raw)}" is not one of ${OutputFormat.options.join(', ')}`);
      return r.data;
    },
  },
  video: {
    env: 'RENDERBRIDGE_VIDEO',
    flag: '--video',
    inProfile: true,
    help: 'default: also make a video of the frames',
    default: () => null,
    parse: boolean,
  },
  overrides: {
    inProfile: true,
    help: 'default requestedRenderConfig fields of submissions',
    default: () => ({}),
    parse: (raw) => {
      const r = RequestedRenderConfig.partial().safeParse(raw);
      if (!r.success)
        throw new Error(r.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; '));
      return r.data as Record<string, unknown>;
    },
  },
  daemonPort: {
    env: 'RENDERBRIDGE_DAEMON_PORT',
    flag: '--port',
    inProfile: false,
    help: 'port of the daemon on 127.0.0.1',
    default: () => DAEMON_DEFAULT_PORT,
    parse: (raw) => {
      const n = typeof raw === 'number' ? raw : Number(text(raw));
      if (!Number.isInteger(n) || n < 0 || n > 65_535)
        throw new Error(`"${String(raw)}" is not a port number (0-65535)`);
      return n;
    },
  },
  reconnectPatience: {
    env: 'RENDERBRIDGE_RECONNECT_PATIENCE',
    inProfile: true,
    help: 'seconds a lost connection to the service is waited for before a submission fails',
    default: () => 120,
    parse: (raw) => {
      const n = typeof raw === 'number' ? raw : Number(text(raw));
      if (!Number.isInteger(n) || n < 0 || n > 3600)
        throw new Error(`"${String(raw)}" is not a whole number of seconds (0-3600)`);
      return n;
    },
  },
};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export function isSettingName(s: string): s is SettingName {
  return Object.hasOwn(SETTINGS, s);
}

/** Variable that picks the profile. */
export const PROFILE_ENV = 'RENDERBRIDGE_PROFILE';
