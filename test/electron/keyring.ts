// A private Secret Service for tests: dbus-run-session with an unlocked gnome-keyring whose
// keyrings live in a temp HOME (the user's own keyring is never touched), as in
// test/daemon/keychain/keychain.test.ts. libsecret (keytar) and secret-tool find it through
// DBUS_SESSION_BUS_ADDRESS. Tools missing: the caller skips outside CI and fails on CI.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const KEYRING_TOOLS = ['dbus-run-session', 'gnome-keyring-daemon', 'secret-tool'];

/** Tools of KEYRING_TOOLS not on PATH; throws on CI when any is missing. */
export function missingKeyringTools(): string[] {
  const missing = KEYRING_TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length && process.env.CI === 'true')
    throw new Error(`the keychain tests need ${missing.join(', ')} (Debian: gnome-keyring dbus-x11 libsecret-tools)`);
  if (missing.length)
    console.warn(
      `skipping the keychain tests: ${missing.join(', ')} not installed (Debian: apt-get install gnome-keyring ` +
        'dbus-x11 libsecret-tools)',
    );
  return missing;
}

export interface KeyringSession {
  /** The temp HOME holding the keyring files. */
  home: string;
  /** DBUS_SESSION_BUS_ADDRESS of the private session. */
  address: string;
  /** `secret-tool lookup service S account A` in the session: the secret, or null. */
  lookup(service: string, account: string): string | null;
  close(): Promise<void>;
}

export async function startKeyringSession(): Promise<KeyringSession> {
  const home = await mkdtemp(path.join(tmpdir(), 'rb-tray-keyring-'));
  const script =
    'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; echo "PID=$$"; echo ' +
    '"ADDR=$DBUS_SESSION_BUS_ADDRESS"; exec sleep 3600';
  const child = spawn('dbus-run-session', ['--', 'sh', '-c', script], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_DATA_HOME: path.join(home, 'data'),
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_CACHE_HOME: path.join(home, 'cache'),
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  const { pid, address } = await new Promise<{ pid: number; address: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no D-Bus session after 20 s: ${out}`)), 20_000);
    child.on('exit', (code) => reject(new Error(`dbus-run-session exited (${code}): ${out}`)));
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const p = /PID=(\d+)/.exec(out);
      const a = /ADDR=(\S+)/.exec(out);
      if (p && a) {
        clearTimeout(timer);
        resolve({ pid: Number(p[1]), address: a[1]! });
      }
    });
  });
  return {
    home,
    address,
    lookup: (service, account) => {
      const r = spawnSync('secret-tool', ['lookup', 'service', service, 'account', account], {
        env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address },
        encoding: 'utf8',
      });
      return r.status === 0 ? r.stdout : null;
    },
    close: async () => {
      // Ending the session's shell makes dbus-run-session stop its bus; gnome-keyring leaves with it.
      process.kill(pid, 'SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      await rm(home, { recursive: true, force: true });
    },
  };
}
