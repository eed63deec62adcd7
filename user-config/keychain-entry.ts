// One keychain entry per profile. The default profile keeps the entry of the single key stored
// before profiles existed (service "renderbridge", account "api-key"), so that key is still found.
import { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from '../shared/constants.js';
import { DEFAULT_PROFILE } from './schema.js';

export interface ProfileKeychainEntry {
  service: string;
  account: string;
}

export function keychainEntryFor(profile: string): ProfileKeychainEntry {
  return {
    service: KEYCHAIN_SERVICE,
    account: profile === DEFAULT_PROFILE ? KEYCHAIN_ACCOUNT : `${KEYCHAIN_ACCOUNT}:${profile}`,
  };
}
