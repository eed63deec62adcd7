// Where renderbridge keeps per-user files on each platform, as pure functions of
// (platform, env, home) so all three are testable on any machine. Linux keeps the XDG folders
// the daemon always used; macOS and Windows get their native folders.
import path from 'node:path';

export type Platform = 'linux' | 'darwin' | 'win32';

export interface UserDirs {
  /** Folder of config.toml. */
  config: string;
  /** Folder of the daemon's state file and packs. */
  state: string;
  /** Folder of log files. */
  logs: string;
}

const APP = 'renderbridge';

/** Any other Node platform (freebsd, ...) is treated as Linux: XDG folders. */
export function platformOf(p: NodeJS.Platform): Platform {
  return p === 'darwin' || p === 'win32' ? p : 'linux';
}

/** The folders of this platform. */
export function userDirs(platform: Platform, env: NodeJS.ProcessEnv, home: string): UserDirs {
  if (platform === 'darwin') {
    const support = path.posix.join(home, 'Library', 'Application Support', APP);
    return {
      config: support,
      state: path.posix.join(support, 'state'),
      logs: path.posix.join(home, 'Library', 'Logs', APP),
    };
  }
  if (platform === 'win32') {
    const w = path.win32;
    const roaming = env.APPDATA || w.join(home, 'AppData', 'Roaming');
    const local = env.LOCALAPPDATA || w.join(home, 'AppData', 'Local');
    return { config: w.join(roaming, APP), state: w.join(local, APP, 'state'), logs: w.join(local, APP, 'logs') };
  }
  return linuxStyleDirs(env, home, path.posix);
}

/**
 * The Linux-style (XDG) folders every platform used before per-platform folders existed; on
 * macOS and Windows they are moved once to userDirs() (see migrate.ts).
 */
export function legacyDirs(platform: Platform, env: NodeJS.ProcessEnv, home: string): UserDirs {
  return linuxStyleDirs(env, home, platform === 'win32' ? path.win32 : path.posix);
}

function linuxStyleDirs(env: NodeJS.ProcessEnv, home: string, p: path.PlatformPath): UserDirs {
  const config = p.join(env.XDG_CONFIG_HOME || p.join(home, '.config'), APP);
  const state = p.join(env.XDG_STATE_HOME || p.join(home, '.local', 'state'), APP);
  return { config, state, logs: p.join(state, 'logs') };
}

/** config.toml inside the config folder. */
export function configFilePath(dirs: UserDirs, platform: Platform): string {
  return (platform === 'win32' ? path.win32 : path.posix).join(dirs.config, 'config.toml');
}
