// Every setting of `renderbridge service` and `renderbridge worker`, once: its config-file key
// (the ServiceConfig field; `s3.*` nested), flag, environment variable, kind of value, help and
// default. Flag registration, the config file's schema, --print-config, the docs
// "Configuration" tables and deploy/systemd/renderbridge.env.example all come from this list
// (scripts/write-config-docs.ts; test/deploy/config-docs.test.ts fails when they drift).
//
// The entries live in groups/, one file per topic; this module puts them together in
// SETTING_GROUPS order, which is the order --help, the docs and the env example show.
import { UNPACK_SETTINGS, UPLOAD_SETTINGS } from './groups/blobs.js';
import { ENGINE_SETTINGS } from './groups/engines.js';
import { LIMIT_SETTINGS } from './groups/limits.js';
import { LISTENING_SETTINGS } from './groups/listening.js';
import { DASHBOARD_SESSION_SETTINGS } from './groups/dashboard-sessions.js';
import { REMOTE_WORKER_SETTINGS } from './groups/remote-worker.js';
import { RENDER_SLOT_SETTINGS } from './groups/render-slots.js';
import { RETENTION_SETTINGS, LOGGING_SETTINGS } from './groups/retention-logging.js';
import type { Setting, SettingCommand } from './setting.js';

export const SETTINGS: readonly Setting[] = [
  ...LISTENING_SETTINGS,
  ...LIMIT_SETTINGS,
  ...RETENTION_SETTINGS,
  ...LOGGING_SETTINGS,
  ...ENGINE_SETTINGS,
  ...RENDER_SLOT_SETTINGS,
  ...UNPACK_SETTINGS,
  ...UPLOAD_SETTINGS,
  ...DASHBOARD_SESSION_SETTINGS,
  ...REMOTE_WORKER_SETTINGS,
];

export function settingsOf(command: SettingCommand): Setting[] {
  return SETTINGS.filter((s) => s.commands.includes(command));
}
