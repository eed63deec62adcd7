// The settings page: profile (choose one or type a new name), service URL, downloads folder and
// API key, with Test connection, Save and Remove. It only talks to the preload's
// window.renderbridge (ipc.ts RendererApi). The key never comes back from main: after saving, the
// field is emptied and the page only shows whether the profile has a key stored.
import type { FarmStatus, ProfileSummary, RendererApi, SettingsResult } from '../ipc.js';

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
const [profileInput, urlInput, downloadsInput, keyInput] = ['profile', 'url', 'downloads', 'key'].map((id) =>
  byId<HTMLInputElement>(id),
) as [HTMLInputElement, HTMLInputElement, HTMLInputElement, HTMLInputElement];
const result = byId<HTMLParagraphElement>('result');
const keychainLine = byId<HTMLParagraphElement>('keychain');
const configLine = byId<HTMLParagraphElement>('config');
const buttons = ['test', 'save', 'clear'].map((id) => byId<HTMLButtonElement>(id));
let last: FarmStatus | undefined;

function show(r: SettingsResult): void {
  result.textContent = r.message;
  result.dataset.ok = String(r.ok);
}

function summaryOf(name: string): ProfileSummary | undefined {
  return last?.profiles.find((p) => p.name === name.trim());
}

/** The key line for the profile in the field: a new profile has no key yet. */
function showKeyLine(): void {
  if (!last || last.keychain === 'unavailable') return;
  keychainLine.textContent = summaryOf(profileInput.value)?.keyStored
    ? 'An API key is stored in the OS keychain.'
    : 'No API key is stored yet.';
}

/** Fills URL and folder from an existing profile (a new name keeps what was typed). */
function fillFromProfile(): void {
  const p = summaryOf(profileInput.value);
  if (p) {
    urlInput.value = p.serviceUrl;
    downloadsInput.value = p.downloadsDir;
  }
  showKeyLine();
}

async function refresh(fill: boolean): Promise<void> {
  const s = (last = await api.status());
  byId('service').textContent = s.serviceUrl;
  byId('active').textContent = s.profile;
  configLine.hidden = !s.configProblem;
  configLine.textContent = s.configProblem ?? '';
  byId('profiles').replaceChildren(
    ...s.profiles.map((p) => Object.assign(document.createElement('option'), { value: p.name })),
  );
  if (fill) {
    profileInput.value = s.profile;
    fillFromProfile();
  }
  keychainLine.dataset.ok = String(s.keychain === 'available');
  if (s.keychain === 'unavailable') {
    keychainLine.textContent = s.message;
    for (const el of [...buttons, profileInput, urlInput, downloadsInput, keyInput]) el.disabled = true;
    return;
  }
  showKeyLine();
}

async function busy(action: () => Promise<SettingsResult>, refill = false): Promise<void> {
  for (const b of buttons) b.disabled = true;
  result.textContent = 'Working…';
  delete result.dataset.ok;
  let r: SettingsResult | undefined;
  try {
    show((r = await action()));
  } finally {
    for (const b of buttons) b.disabled = false;
    await refresh(refill && r?.ok === true);
  }
}

/** What the form says now; an empty key field means "the profile's stored key". */
function farm(): { serviceUrl: string; profile: string; downloadsDir: string; key?: string } {
  const key = keyInput.value;
  return {
    serviceUrl: urlInput.value,
    profile: profileInput.value,
    downloadsDir: downloadsInput.value,
    ...(key ? { key } : {}),
  };
}

profileInput.addEventListener('change', fillFromProfile);
profileInput.addEventListener('input', () => {
  if (summaryOf(profileInput.value)) fillFromProfile();
  else showKeyLine();
});
byId('test').addEventListener('click', () => {
  const { downloadsDir: _unused, ...request } = farm();
  void busy(() => api.testConnection(request));
});
byId<HTMLFormElement>('form').addEventListener('submit', (event) => {
  event.preventDefault();
  const request = farm();
  void busy(async () => {
    const r = await api.saveKey(request);
    if (r.ok) keyInput.value = '';
    return r;
  }, true);
});
byId('clear').addEventListener('click', () => void busy(() => api.clearKey({ profile: profileInput.value })));

void refresh(true);
