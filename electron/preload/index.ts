// The only door between the settings page and the main process: exactly RendererApi (ipc.ts),
// each method one invoke on its declared channel. Runs sandboxed: it is bundled into one
// CommonJS file that requires nothing but `electron` (electron/build.mjs).
import { contextBridge, ipcRenderer } from 'electron';
import { IPC, RENDERER_API_NAME, type IpcContract, type RendererApi, type TestConnectionRequest } from '../ipc.js';

function invoke<C extends keyof IpcContract>(
  channel: C,
  request?: IpcContract[C]['request'],
): Promise<IpcContract[C]['response']> {
  return ipcRenderer.invoke(channel, request) as Promise<IpcContract[C]['response']>;
}

/** Copies only the declared fields, as strings: nothing else the page puts on the object crosses over. */
function farmFields(request: TestConnectionRequest): TestConnectionRequest {
  return {
    serviceUrl: String(request.serviceUrl),
    profile: String(request.profile),
    ...(request.key !== undefined ? { key: String(request.key) } : {}),
  };
}

const api: RendererApi = {
  status: () => invoke(IPC.settingsStatus),
  testConnection: (request) => invoke(IPC.settingsTest, farmFields(request)),
  saveKey: (request) =>
    invoke(IPC.settingsSave, { ...farmFields(request), downloadsDir: String(request.downloadsDir) }),
  clearKey: (request) => invoke(IPC.settingsClear, { profile: String(request.profile) }),
};

contextBridge.exposeInMainWorld(RENDERER_API_NAME, api);
