// The per-user state file (`<stateDir>/daemon.json`): how local clients find the daemon's port and
// token. Written atomically (temp file + rename) with mode 0600 in a folder made 0700, read back
// through the shared DaemonState schema, and removed on close only while it is still ours.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { DAEMON_STATE_FILE, DaemonState } from '../shared/daemon/api.js';
import { DaemonClient } from '../shared/daemon/client.js';

/** A new access token: 32 random bytes (256 bits), base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function stateFilePath(stateDir: string): string {
  return path.join(stateDir, DAEMON_STATE_FILE);
}

/**
 * Writes `state` to `<stateDir>/daemon.json` with mode 0600, creating the folder with mode 0700
 * (and narrowing an existing one to 0700: it holds a secret). Returns the file's path.
 */
export async function writeStateFile(stateDir: string, state: DaemonState): Promise<string> {
  const valid = DaemonState.parse(state);
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await chmod(stateDir, 0o700);
  const file = stateFilePath(stateDir);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  // 'wx' + mode: the file never exists with wider permissions, not even for a moment.
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(valid, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return file;
}

export type StateFileRead = { state: DaemonState } | { state: null; reason: 'missing' | 'invalid' };

/** Reads and validates the state file; a missing or malformed file gives `state: null` and why. */
export async function readStateFile(stateDir: string): Promise<StateFileRead> {
  let text: string;
  try {
    text = await readFile(stateFilePath(stateDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: null, reason: 'missing' };
    throw err;
  }
  try {
    const parsed = DaemonState.safeParse(JSON.parse(text));
    return parsed.success ? { state: parsed.data } : { state: null, reason: 'invalid' };
  } catch {
    return { state: null, reason: 'invalid' };
  }
}

/** Removes the state file if it still carries `token` (a newer daemon's file is left alone). True when removed. */
export async function removeStateFile(stateDir: string, token: string): Promise<boolean> {
  const read = await readStateFile(stateDir).catch(() => ({ state: null }));
  if (!read.state || read.state.token !== token) return false;
  await rm(stateFilePath(stateDir), { force: true });
  return true;
}

/** True when a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The daemon a state file describes, when it is really running: its process is alive and
 * `GET /health` on its port answers 200 with the daemon's Health body to its token (DaemonClient).
 * Null for a stale file (crashed daemon, reused pid, port taken over
 * by something else). `timeoutMs` bounds the probe (default 1500).
 */
export async function findLiveDaemon(
  stateDir: string,
  timeoutMs = 1500,
): Promise<(DaemonState & { stateFile: string }) | null> {
  const { state } = await readStateFile(stateDir);
  if (!state || !isProcessAlive(state.pid)) return null;
  // Any failure (refused, timed out, wrong token, an answer that is not the daemon's Health) means stale.
  const client = new DaemonClient({ origin: `http://127.0.0.1:${state.port}`, token: state.token, timeoutMs });
  const live = await client.health().then(
    () => true,
    () => false,
  );
  return live ? { ...state, stateFile: stateFilePath(stateDir) } : null;
}
