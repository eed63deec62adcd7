// Where the tray app finds what it ships: the bundled Blender add-on zip (electron-builder
// `extraResources`, built by `npm run build:addon` into dist/renderbridge-addon.zip) and the
// daemon's entry point (bin/renderbridge.js, started with the app's own binary as Node).
import path from 'node:path';

export interface AppLocation {
  /** app.isPackaged. */
  packaged: boolean;
  /** process.resourcesPath (the packaged app's resources folder). */
  resourcesPath: string;
  /** app.getAppPath() (the repository root when run from sources). */
  appPath: string;
}

/** The add-on zip to install into Blender (Edit > Preferences > Add-ons > Install…). */
export function addonZipPath(at: AppLocation): string {
  return at.packaged
    ? path.join(at.resourcesPath, 'renderbridge-addon.zip')
    : path.join(at.appPath, 'dist', 'renderbridge-addon.zip');
}

/** The command that starts the daemon: the app's binary as Node (ELECTRON_RUN_AS_NODE=1) on bin/renderbridge.js. */
export function daemonCommand(
  at: AppLocation,
  execPath: string,
  stateDir: string,
  env: NodeJS.ProcessEnv,
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  return {
    command: execPath,
    args: [path.join(at.appPath, 'bin', 'renderbridge.js'), 'daemon', '--state-dir', stateDir],
    env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
  };
}

/** The message of the "Install the Blender add-on…" menu item. */
export function addonInstructions(zip: string, exists: boolean): string {
  if (!exists)
    return (
      `The add-on zip is missing from this build (${zip}). Build it with \`npm run build:addon\` and package ` +
      `the app again.`
    );
  return (
    `The Blender add-on is at:\n${zip}\n\nIn Blender: Edit > Preferences > Add-ons > Install…, choose this ` +
    `file, then enable "Renderbridge".`
  );
}
