// The tray app's Electron security settings, checked without the Electron binary (it cannot be
// downloaded here, so no window can open): the hardening module is run for real against a stand-in
// WebContents (an EventEmitter with setWindowOpenHandler, the only fake in these tests, because a
// real one needs Electron); the main-process sources are read for what must hold everywhere (sandbox
// first, every window built with the secure preferences, IPC channel names only from ipc.ts); the
// app is bundled with electron/build.mjs (the preload must require nothing but `electron`, as a
// sandboxed preload can); electron-builder.yml is validated against electron-builder's own schema.
import { EventEmitter } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { WebContents } from 'electron';
import { afterAll, describe, expect, it } from 'vitest';
import { APP_CSP, APP_CSP_HEADER, lockDown, secureWebPreferences } from '../../electron/main/hardening.js';
import { IPC } from '../../electron/ipc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const run = promisify(execFile);
const src = (p: string) => readFile(path.join(ROOT, p), 'utf8');
let out: string | undefined;
afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

async function electronSources(): Promise<Record<string, string>> {
  const files = (await readdir(path.join(ROOT, 'electron'), { recursive: true })).filter((f) => f.endsWith('.ts'));
  return Object.fromEntries(
    await Promise.all(files.map(async (f) => [`electron/${f}`, await src(`electron/${f}`)] as const)),
  );
}

describe('tray app security (Electron binary not available: checked through its modules, sources and bundle)', () => {
  it('every window gets the sandbox, context isolation and no Node, and no page may open, navigate or embed', () => {
    for (const prefs of [secureWebPreferences(), secureWebPreferences('/app/preload.cjs')]) {
      expect(prefs).toMatchObject({
        sandbox: true,
        contextIsolation: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        webviewTag: false,
      });
    }
    expect(secureWebPreferences()).not.toHaveProperty('preload');

    // A stand-in WebContents: what lockDown registers is then driven as Electron would.
    const emitter = new EventEmitter();
    let openHandler: ((d: { url: string }) => { action: string }) | undefined;
    const contents = Object.assign(emitter, {
      setWindowOpenHandler: (h: typeof openHandler) => (openHandler = h),
      getURL: () => 'file:///app/settings.html',
    }) as unknown as WebContents;
    lockDown(contents);
    expect(openHandler?.({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    const prevented = (event: string, ...args: unknown[]): boolean => {
      let stopped = false;
      emitter.emit(event, { preventDefault: () => (stopped = true) }, ...args);
      return stopped;
    };
    expect(prevented('will-navigate', 'https://evil.example/')).toBe(true);
    expect(prevented('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(prevented('will-navigate', 'file:///app/settings.html')).toBe(false); // a reload of itself
    expect(prevented('will-redirect', 'https://evil.example/')).toBe(true);
    expect(prevented('will-attach-webview', {}, {})).toBe(true);
  });

  it('main enables the sandbox first, builds every window through the hardening, applies a strict CSP', async () => {
    const index = await src('electron/main/index.ts');
    const enable = index.indexOf('app.enableSandbox();');
    expect(enable).toBeGreaterThan(0);
    expect(enable).toBeLessThan(index.indexOf('await app.whenReady()'));
    expect(index).toContain('app.requestSingleInstanceLock()');
    expect(index).toMatch(/app\.on\('web-contents-created', \(_event, contents\) => lockDown\(contents\)\)/);
    expect(index).toContain('installSessionCsp();');

    const all = await electronSources();
    for (const [file, text] of Object.entries(all)) {
      expect(text, file).not.toMatch(
        /nodeIntegration\s*:\s*true|contextIsolation\s*:\s*false|sandbox\s*:\s*false|webSecurity\s*:\s*false|webviewTag\s*:\s*true/,
      );
      const windows = text.match(/new BrowserWindow\(\{[^\n]*\}\)/g) ?? [];
      for (const w of windows)
        expect(w, file).toMatch(/webPreferences: secureWebPreferences\((options\.preload)?\)\s*\}\)$/);
      if (file !== 'electron/main/windows.ts') expect(text, file).not.toContain('new BrowserWindow(');
    }
    expect(all['electron/main/windows.ts']!.match(/new BrowserWindow\(/g)).toHaveLength(2);

    expect(APP_CSP.split('; ')[0]).toBe("default-src 'none'");
    expect(APP_CSP).toContain("script-src 'self'");
    expect(APP_CSP).not.toMatch(/unsafe|\*|data:|http:/);
    expect(APP_CSP_HEADER).toBe(`${APP_CSP}; frame-ancestors 'none'`);
    expect(all['electron/main/windows.ts']).toContain("'Content-Security-Policy': [APP_CSP_HEADER]");
    // The settings page carries the same policy, and no inline script or style.
    const html = await src('electron/renderer/settings.html');
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${APP_CSP}">`);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]|<style|style="| on[a-z]+="/);
  });

  it('IPC: channel names come only from ipc.ts, one preload bridge exposes exactly the declared API', async () => {
    const channels = Object.values(IPC);
    expect(new Set(channels).size).toBe(channels.length);
    const all = await electronSources();
    for (const [file, text] of Object.entries(all)) {
      // No string-literal channel anywhere: every ipcMain/ipcRenderer call names an IPC constant or a typed variable.
      expect(text, file).not.toMatch(/ipc(Main|Renderer)\.\w+\(\s*['"`]/);
      if (file !== 'electron/ipc.ts')
        for (const c of channels) expect(text, `${file} repeats ${c}`).not.toContain(`'${c}'`);
      if (file !== 'electron/preload/index.ts')
        expect(text, file).not.toMatch(/import[^;]*\b(contextBridge|ipcRenderer)\b|exposeInMainWorld\(/);
    }
    const preload = all['electron/preload/index.ts']!;
    expect(preload.match(/exposeInMainWorld\(/g)).toHaveLength(1);
    expect(preload).toContain('exposeInMainWorld(RENDERER_API_NAME, api)');
    // Each method of the API invokes its own channel.
    for (const [method, channel] of [
      ['status', 'settingsStatus'],
      ['testConnection', 'settingsTest'],
      ['saveKey', 'settingsSave'],
      ['clearKey', 'settingsClear'],
    ]) {
      expect(preload).toMatch(new RegExp(`${method}: \\([^)]*\\) =>\\s*invoke\\(IPC\\.${channel}\\b`));
    }
    // Main handles every channel and nothing else (the handler table is typed by IpcContract).
    const handlers = all['electron/main/ipc-handlers.ts']!;
    for (const key of Object.keys(IPC)) expect(handlers).toContain(`[IPC.${key}]:`);
    expect(handlers).toContain('isSettingsPage(event.senderFrame.url)');
  });

  it('bundles: the sandboxed preload requires only electron, the settings page is one browser script', async () => {
    out = await mkdtemp(path.join(tmpdir(), 'rb-electron-build-'));
    await run(process.execPath, ['electron/build.mjs', out], { cwd: ROOT });
    const preload = await readFile(path.join(out, 'preload/index.cjs'), 'utf8');
    expect([...new Set(preload.match(/require\("[^"]+"\)/g))]).toEqual(['require("electron")']);
    expect(preload).toContain('settings:save-key');
    const page = await readFile(path.join(out, 'renderer/settings.js'), 'utf8');
    expect(page).not.toMatch(/require\(/);
    expect(await readFile(path.join(out, 'renderer/settings.html'), 'utf8')).toContain(
      '<script src="settings.js" defer></script>',
    );
    const main = await readFile(path.join(out, 'main/index.cjs'), 'utf8');
    expect(main).toContain('require("electron")');
    expect(main).toContain('enableSandbox');
  }, 60_000);

  it(
    'electron-builder.yml is valid for electron-builder and targets AppImage, deb, dmg and nsis with the ' +
      'add-on inside',
    async () => {
      const yaml = require('js-yaml') as { load(text: string): unknown };
      const Ajv = require('ajv') as new (o: object) => {
        compile(s: object): ((d: unknown) => boolean) & { errors?: unknown };
      };
      const schema = JSON.parse(await src('node_modules/app-builder-lib/scheme.json')) as object;
      const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
      const config = yaml.load(await src('electron-builder.yml')) as Record<
        string,
        Record<string, unknown> & unknown[]
      >;
      expect(validate(config), JSON.stringify(validate.errors)).toBe(true);
      expect(config.linux!.target).toEqual(['AppImage', 'deb']);
      expect(config.mac!.target).toBe('dmg');
      expect(config.win!.target).toBe('nsis');
      expect(config.extraResources).toEqual([{ from: 'dist/renderbridge-addon.zip', to: 'renderbridge-addon.zip' }]);
      expect(config.extraMetadata).toEqual({ main: 'dist-electron/main/index.cjs' });
      // A wrong key is caught by the same check (so the check can fail).
      expect(validate({ ...config, linux: { ...config.linux, targett: 'AppImage' } })).toBe(false);
    },
  );
});
