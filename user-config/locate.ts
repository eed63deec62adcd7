// Where this machine's user keeps renderbridge's files, from the real process (platform, env,
// home folder); the pure path logic is in paths.ts.
import { homedir } from 'node:os';
import { configFilePath, legacyDirs, platformOf, userDirs, type Platform, type UserDirs } from './paths.js';

export interface UserLocation {
  platform: Platform;
  env: NodeJS.ProcessEnv;
  home: string;
  dirs: UserDirs;
  legacy: UserDirs;
  /** config.toml. */
  configFile: string;
}

export function locateUserFiles(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): UserLocation {
  const p = platformOf(platform);
  const dirs = userDirs(p, env, home);
  return { platform: p, env, home, dirs, legacy: legacyDirs(p, env, home), configFile: configFilePath(dirs, p) };
}
