// The Keychain port through libsecret's `secret-tool` CLI (Linux, where keytar's native module
// is missing). The secret travels on stdin, never on the command line (which other users can read
// in /proc). Entries are stored with keytar's schema attribute (`xdg:schema
// org.freedesktop.Secret.Generic`) so both adapters, and the tray app, read the same entry;
// lookups match on service and account only, so an entry stored by hand with
// `secret-tool store --label=renderbridge service renderbridge account api-key` is found too.
import { spawn } from 'node:child_process';
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../../shared/constants.js';
import type { Keychain } from '../ports.js';
import { KeychainUnavailableError, type KeychainEntry } from './errors.js';

/** The libsecret schema keytar stores its entries under. */
export const KEYTAR_SCHEMA = 'org.freedesktop.Secret.Generic';

export interface SecretToolKeychainOptions extends KeychainEntry {
  /** The executable. Default `secret-tool` on PATH. */
  binary?: string;
  /** Environment of each run (it carries DBUS_SESSION_BUS_ADDRESS). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Longest a run may take (a locked keyring may wait for a prompt). Default 10000 ms. */
  timeoutMs?: number;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class SecretToolKeychain implements Keychain {
  private readonly service: string;
  private readonly account: string;
  private readonly binary: string;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private readonly timeoutMs: number;

  constructor(options: SecretToolKeychainOptions = {}) {
    this.service = options.service ?? KEYCHAIN_SERVICE;
    this.account = options.account ?? KEYCHAIN_ACCOUNT;
    this.binary = options.binary ?? 'secret-tool';
    this.env = options.env;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async get(): Promise<string | null> {
    const r = await this.run(['lookup', 'service', this.service, 'account', this.account]);
    if (r.code === 0) return r.stdout;
    // Exit 1 with nothing on stderr: no such entry. Anything said on stderr is a failure.
    if (r.code === 1 && r.stderr.trim() === '') return null;
    throw this.failure('lookup', r);
  }

  async set(secret: string): Promise<void> {
    if (!secret) throw new TypeError('the secret must not be empty');
    const label = `${this.service}/${this.account}`;
    const r = await this.run(
      ['store', `--label=${label}`, 'xdg:schema', KEYTAR_SCHEMA, 'service', this.service, 'account', this.account],
      secret,
    );
    if (r.code !== 0) throw this.failure('store', r);
  }

  async delete(): Promise<boolean> {
    // `clear` exits 1 both when nothing matched and when it failed: look first.
    if ((await this.get()) === null) return false;
    const r = await this.run(['clear', 'service', this.service, 'account', this.account]);
    if (r.code !== 0) throw this.failure('clear', r);
    return true;
  }

  private failure(what: string, r: RunResult): KeychainUnavailableError {
    const said = r.stderr.trim().split('\n')[0] ?? '';
    return new KeychainUnavailableError(`secret-tool ${what} failed (exit ${r.code})${said ? `: ${said}` : ''}`);
  }

  private run(args: string[], stdin?: string): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, {
        env: this.env ?? process.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        timeout: this.timeoutMs,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => out.push(c));
      child.stderr.on('data', (c: Buffer) => err.push(c));
      child.on('error', (e: NodeJS.ErrnoException) => {
        const why =
          e.code === 'ENOENT' ? `${this.binary} is not installed (Debian: apt-get install libsecret-tools)` : e.message;
        reject(new KeychainUnavailableError(why, { cause: e }));
      });
      child.on('close', (code, signal) => {
        if (signal) {
          reject(
            new KeychainUnavailableError(
              `secret-tool ${args[0]} did not finish within ${this.timeoutMs} ms (${signal})`,
            ),
          );
          return;
        }
        resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
      });
      // An EPIPE when the tool exits early is reported through 'close' already.
      child.stdin.on('error', () => {});
      child.stdin.end(stdin ?? '');
    });
  }
}
