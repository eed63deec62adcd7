// One conformance suite for every Keychain adapter (keytar, secret-tool): the port's contract,
// checked against a real Secret Service (gnome-keyring), with the `secret-tool` CLI as the
// independent reader a user would reach for.
import { describe, expect, it } from 'vitest';
import type { Keychain } from '../../../daemon/ports.js';

export interface KeychainEntryName {
  service: string;
  account: string;
}

export interface KeychainHarness {
  keychain: Keychain;
  /** The entry as `secret-tool lookup service S account A` prints it; null when there is none. */
  lookup(): Promise<string | null>;
  /** How many keyring items carry this service and account (`secret-tool search --all`). */
  count(): Promise<number>;
}

/** `open` makes an adapter for a fresh entry name (each test uses its own account). */
export function keychainConformance(name: string, open: (entry: KeychainEntryName) => KeychainHarness): void {
  let n = 0;
  const fresh = (): KeychainHarness =>
    open({ service: 'renderbridge-conformance', account: `${name}-${process.pid}-${Date.now()}-${n++}` });

  describe(`Keychain conformance: ${name}`, () => {
    it('reads null and deletes nothing while there is no entry', async () => {
      const h = fresh();
      expect(await h.keychain.get()).toBeNull();
      expect(await h.keychain.delete()).toBe(false);
      expect(await h.lookup()).toBeNull();
    });

    it('stores a secret that it and secret-tool read back exactly', async () => {
      const h = fresh();
      for (const secret of [
        'rb_live_' + 'A1b2-_'.repeat(6) + 'z',
        `with "quotes" 'and' $HOME; | & \` spaces`,
        'ключ-密钥-🔑',
      ]) {
        await h.keychain.set(secret);
        expect(await h.keychain.get()).toBe(secret);
        expect(await h.lookup()).toBe(secret);
      }
    });

    it('replaces the entry on a second set instead of adding one', async () => {
      const h = fresh();
      await h.keychain.set('first-secret');
      await h.keychain.set('second-secret');
      expect(await h.keychain.get()).toBe('second-secret');
      expect(await h.count()).toBe(1);
    });

    it('deletes the entry once', async () => {
      const h = fresh();
      await h.keychain.set('to-delete');
      expect(await h.keychain.delete()).toBe(true);
      expect(await h.keychain.get()).toBeNull();
      expect(await h.lookup()).toBeNull();
      expect(await h.count()).toBe(0);
      expect(await h.keychain.delete()).toBe(false);
    });

    it('keeps entries of other accounts apart', async () => {
      const a = fresh();
      const b = fresh();
      await a.keychain.set('secret-a');
      expect(await b.keychain.get()).toBeNull();
      await b.keychain.set('secret-b');
      expect(await a.keychain.get()).toBe('secret-a');
      await a.keychain.delete();
      expect(await b.keychain.get()).toBe('secret-b');
    });

    it('refuses an empty secret', async () => {
      const h = fresh();
      await expect(h.keychain.set('')).rejects.toThrow(TypeError);
      expect(await h.keychain.get()).toBeNull();
    });
  });
}
