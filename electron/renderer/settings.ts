// The settings page: key entry, Test connection, Save, Remove. It only talks to the preload's
// window.renderbridge (ipc.ts RendererApi). The key never comes back from main: after saving, the
// field is emptied and the page only shows whether a key is stored.
import type { RendererApi, SettingsResult } from '../ipc.js';

declare global {
  interface Window {
    renderbridge: RendererApi;
  }
}

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`settings.html lacks #${id}`);
  return el as T;
}

const api = window.renderbridge;
const keyInput = byId<HTMLInputElement>('key');
const result = byId<HTMLParagraphElement>('result');
const keychainLine = byId<HTMLParagraphElement>('keychain');
const buttons = ['test', 'save', 'clear'].map((id) => byId<HTMLButtonElement>(id));

function show(r: SettingsResult): void {
  result.textContent = r.message;
  result.dataset.ok = String(r.ok);
}

async function refresh(): Promise<void> {
  const s = await api.status();
  byId('service').textContent = s.serviceUrl;
  keychainLine.dataset.ok = String(s.keychain === 'available');
  if (s.keychain === 'unavailable') {
    keychainLine.textContent = s.message;
    for (const b of buttons) b.disabled = true;
    keyInput.disabled = true;
    return;
  }
  keychainLine.textContent = s.keyStored ? 'An API key is stored in the OS keychain.' : 'No API key is stored yet.';
}

async function busy(action: () => Promise<SettingsResult>): Promise<void> {
  for (const b of buttons) b.disabled = true;
  result.textContent = 'Working…';
  delete result.dataset.ok;
  try {
    show(await action());
  } finally {
    for (const b of buttons) b.disabled = false;
    await refresh();
  }
}

byId('test').addEventListener('click', () => {
  const key = keyInput.value;
  void busy(() => api.testConnection(key ? { key } : {}));
});
byId<HTMLFormElement>('form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value;
  void busy(async () => {
    const r = await api.saveKey({ key });
    if (r.ok) keyInput.value = '';
    return r;
  });
});
byId('clear').addEventListener('click', () => void busy(() => api.clearKey()));

void refresh();
