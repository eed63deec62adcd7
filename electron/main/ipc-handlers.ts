// The main-process side of the IPC contract (ipc.ts): one handler per channel, each checking that
// the call comes from the settings page and that its payload has the declared shape. The key goes
// from the renderer to the keychain; no handler ever answers with it.
import { ipcMain, type IpcMainInvokeEvent } from 'electron';
import type { KeychainSettings } from '../core/keychain-settings.js';
import { IPC, type IpcContract, type SettingsResult } from '../ipc.js';

/** Longest key accepted from the renderer. */
const MAX_KEY_LENGTH = 4096;

type Handler<C extends keyof IpcContract> = (request: unknown) => Promise<IpcContract[C]['response']>;

function keyOf(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const key = (request as { key?: unknown }).key;
  return typeof key === 'string' && key.length <= MAX_KEY_LENGTH ? key : undefined;
}

const BAD_REQUEST: SettingsResult = { ok: false, problem: 'EMPTY_KEY', message: 'Enter the API key first.' };

/** Registers the handlers; `isSettingsPage` says whether a sender URL is the app's settings page. */
export function registerIpcHandlers(settings: KeychainSettings, isSettingsPage: (url: string) => boolean): () => void {
  const handlers: { [C in keyof IpcContract]: Handler<C> } = {
    [IPC.settingsStatus]: () => settings.status(),
    [IPC.settingsTest]: (req) => (typeof req === 'object' && req !== null && (req as { key?: unknown }).key === undefined ? settings.testConnection() : settings.testConnection(keyOf(req) ?? '')),
    [IPC.settingsSave]: (req) => {
      const key = keyOf(req);
      return key === undefined ? Promise.resolve(BAD_REQUEST) : settings.saveKey(key);
    },
    [IPC.settingsClear]: () => settings.clearKey(),
  };
  for (const [channel, handler] of Object.entries(handlers) as [keyof IpcContract, Handler<keyof IpcContract>][]) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, request: unknown) => {
      if (!event.senderFrame || !isSettingsPage(event.senderFrame.url)) throw new Error('refused: not the settings page');
      return handler(request);
    });
  }
  return () => {
    for (const channel of Object.values(IPC)) ipcMain.removeHandler(channel);
  };
}
