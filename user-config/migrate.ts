// The one-time move from the Linux-style folders to the platform's own (macOS, Windows): done
// when the new folder does not exist yet and the old one does, so it runs once and never
// overwrites anything. Linux has nothing to move (its folders did not change).
import { cp, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Platform, UserDirs } from './paths.js';

export interface Moved {
  from: string;
  to: string;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

async function move(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (err) {
    // Another volume: copy, then remove the original.
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await cp(from, to, { recursive: true });
    await rm(from, { recursive: true, force: true });
  }
}

/** Moves each legacy folder (config, state) whose new home is missing; returns what moved. */
export async function migrateLegacyDirs(platform: Platform, current: UserDirs, legacy: UserDirs): Promise<Moved[]> {
  if (platform === 'linux') return [];
  const moved: Moved[] = [];
  for (const key of ['config', 'state'] as const) {
    const from = legacy[key];
    const to = current[key];
    if (from === to || (await exists(to)) || !(await exists(from))) continue;
    await move(from, to);
    moved.push({ from, to });
  }
  return moved;
}
