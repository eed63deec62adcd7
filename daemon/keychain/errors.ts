// The one error both keychain adapters throw when no keychain can be reached (native module
// missing, no D-Bus session, keyring locked, secret-tool not installed). Callers fall back to
// RENDERBRIDGE_API_KEY and report "keychain unavailable"; the message never holds the secret.
export class KeychainUnavailableError extends Error {
  override readonly name = 'KeychainUnavailableError';
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`keychain unavailable: ${reason}`, options);
  }
}

/** The entry an adapter reads and writes (default: KEYCHAIN_SERVICE / KEYCHAIN_ACCOUNT of shared/constants.ts). */
export interface KeychainEntry {
  service?: string;
  account?: string;
}
