// The Keychain port for "the active profile": each call goes to the entry of the profile in use
// now (one entry per profile, user-config/keychain-entry.ts), so an edit of config.toml that
// switches profile switches keys without a restart.
import { keychainEntryFor, type ProfileKeychainEntry } from '../../user-config/keychain-entry.js';
import type { Keychain } from '../ports.js';

export class ProfileKeychain implements Keychain {
  private made: { profile: string; keychain: Keychain } | undefined;

  constructor(
    private readonly profile: () => string,
    private readonly make: (entry: ProfileKeychainEntry) => Keychain,
  ) {}

  get(): Promise<string | null> {
    return this.current().get();
  }

  set(secret: string): Promise<void> {
    return this.current().set(secret);
  }

  delete(): Promise<boolean> {
    return this.current().delete();
  }

  private current(): Keychain {
    const profile = this.profile();
    if (this.made?.profile !== profile) this.made = { profile, keychain: this.make(keychainEntryFor(profile)) };
    return this.made.keychain;
  }
}
