// The only door between the settings page and the main process: exactly RendererApi (ipc.ts),
// each method one invoke on its declared channel. Runs sandboxed: it is bundled into one
// CommonJS file that requires nothing but `electron` (electron/build.mjs).
import { contextBridge, ipcRenderer } from 'electron';
import { IPC, RENDERER_API_NAME, type IpcContract, type RendererApi } from '../ipc.js';

function invoke<C extends keyof IpcContract>(channel: C, request?: IpcContract[C]['request']): Promise<IpcContract[C]['response']> {
  return ipcRenderer.invoke(channel, request) as Promise<IpcContract[C]['response']>;
}

const api: RendererApi = {
  status: () => invoke(IPC.settingsStatus),
  testConnection: (request) => invoke(IPC.settingsTest, { ...(request.key !== undefined ? { key: String(request.key) } : {}) }),
  saveKey: (request) => invoke(IPC.settingsSave, { key: String(request.key) }),
  clearKey: () => invoke(IPC.settingsClear),
};

contextBridge.exposeInMainWorld(RENDERER_API_NAME, api);
