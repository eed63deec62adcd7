/** Path prefix of every API endpoint (spec: `{base_url}` ends with it). */
export const API_PREFIX = '/api/external/v1';
/** Version label of the machine-readable description (spec: Versioning 2). */
export const OPENAPI_VERSION_LABEL = '0.0.1';
/** Fixed prefix of every API key, so leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = 'rb_live_';
/** Largest upload the spec allows is "below 5 GiB". */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 3 - 1;
/** Header set on a render replay (spec: POST render idempotency). */
export const IDEMPOTENT_REPLAY_HEADER = 'x-idempotent-replay';
/** OS keychain entry where the tray app stores the API key and the daemon reads it. */
export const KEYCHAIN_SERVICE = 'renderbridge';
export const KEYCHAIN_ACCOUNT = 'api-key';
