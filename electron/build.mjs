// Builds the tray app's JavaScript into dist-electron/ (what electron-builder packages, with
// dist/ from `npm run build` for the daemon): main (CommonJS, Node), the preload (one CommonJS
// file that requires only `electron`, as a sandboxed preload must) and the settings page (one
// browser script plus its HTML and CSS). esbuild comes with tsx.
import { copyFileSync, mkdirSync } from 'node:fs';
import process from 'node:process';
import { build } from 'esbuild';

const out = process.argv[2] ?? 'dist-electron';
const common = { bundle: true, sourcemap: false, target: 'es2022', logLevel: 'warning', legalComments: 'none' };

await build({
  ...common,
  entryPoints: ['electron/main/index.ts'],
  outfile: `${out}/main/index.cjs`,
  platform: 'node',
  format: 'cjs',
  external: ['electron', 'keytar'],
});
await build({
  ...common,
  entryPoints: ['electron/preload/index.ts'],
  outfile: `${out}/preload/index.cjs`,
  platform: 'node',
  format: 'cjs',
  external: ['electron'],
});
await build({
  ...common,
  entryPoints: ['electron/renderer/settings.ts'],
  outfile: `${out}/renderer/settings.js`,
  platform: 'browser',
  format: 'iife',
});
mkdirSync(`${out}/renderer`, { recursive: true });
for (const f of ['settings.html', 'settings.css']) copyFileSync(`electron/renderer/${f}`, `${out}/renderer/${f}`);
