// The main-process side of the IPC contract (ipc.ts): one handler per channel, each checking that
// the call comes from the settings page and that its payload has the declared shape (the renderer
// is not trusted). The key goes from the renderer to the keychain; no handler ever answers with it.
import { ipcMain, type IpcMainInvokeEvent } from 'electron';
import type { FarmSettings } from '../core/farm-settings.js';
import { IPC, type IpcContract, type SettingsResult } from '../ipc.js';

/** Longest text (key, URL, folder, profile) accepted from the renderer. */
const MAX_FIELD_LENGTH = 4096;

type Handler<C extends keyof IpcContract> = (request: unknown) => Promise<IpcContract[C]['response']>;

/** The string `name` of the request, undefined when absent, null when not a string of sane length. */
function field(request: unknown, name: string): string | undefined | null {
  if (typeof request !== 'object' || request === null) return null;
  const value = (request as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  return typeof value === 'string' && value.length <= MAX_FIELD_LENGTH ? value : null;
}

/** The named string fields of the request (optional ones may be absent), or null when the shape is wrong. */
function fields<R extends string, O extends string>(
  request: unknown,
  required: R[],
  optional: O[] = [],
): ({ [K in R]: string } & { [K in O]?: string }) | null {
  const out: Record<string, string> = {};
  for (const name of [...required, ...optional]) {
    const v = field(request, name);
    if (v === null || (v === undefined && (required as string[]).includes(name))) return null;
    if (v !== undefined) out[name] = v;
  }
  return out as { [K in R]: string } & { [K in O]?: string };
}

const BAD_REQUEST: SettingsResult = {
  ok: false,
  problem: 'BAD_SETTING',
  message: 'The window sent settings of the wrong shape: close it and open Settings again.',
};

/** Registers the handlers; `isSettingsPage` says whether a sender URL is the app's settings page. */
export function registerIpcHandlers(settings: FarmSettings, isSettingsPage: (url: string) => boolean): () => void {
  const handlers: { [C in keyof IpcContract]: Handler<C> } = {
    [IPC.settingsStatus]: () => settings.status(),
    [IPC.settingsTest]: (req) => {
      const r = fields(req, ['serviceUrl', 'profile'], ['key']);
      return r ? settings.testConnection(r) : Promise.resolve(BAD_REQUEST);
    },
    [IPC.settingsSave]: (req) => {
      const r = fields(req, ['serviceUrl', 'profile', 'downloadsDir'], ['key']);
      return r ? settings.saveKey(r) : Promise.resolve(BAD_REQUEST);
    },
    [IPC.settingsClear]: (req) => {
      const r = fields(req, ['profile']);
      return r ? settings.clearKey(r) : Promise.resolve(BAD_REQUEST);
    },
  };
  for (const [channel, handler] of Object.entries(handlers) as [keyof IpcContract, Handler<keyof IpcContract>][]) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, request: unknown) => {
      if (!event.senderFrame || !isSettingsPage(event.senderFrame.url))
        throw new Error('refused: not the settings page');
      return handler(request);
    });
  }
  return () => {
    for (const channel of Object.values(IPC)) ipcMain.removeHandler(channel);
  };
}
