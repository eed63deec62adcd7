// The service URL a person types (`http://farm:8420`) and the API root every client calls
// (`http://farm:8420/api/external/v1`): one function, so the CLI flag, the per-user config and
// the environment variable all accept both forms the same way.
import { API_PREFIX } from './constants.js';

/**
 * The API root for `input`: a bare origin (or any path not already ending in the API prefix)
 * gets `/api/external/v1` appended; a URL already ending in it is kept. Trailing slashes, a
 * query and a fragment are dropped. Throws a TypeError naming the problem for anything that is
 * not an http(s) URL, so callers can report it against their own flag or setting.
 */
export function normalizeServiceUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new TypeError(`not a URL: ${JSON.stringify(input)} (expected e.g. http://farm:8420)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`${JSON.stringify(input)} is not an http(s) URL (expected e.g. http://farm:8420)`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  const withPrefix = path.endsWith(API_PREFIX) ? path : `${path}${API_PREFIX}`;
  return `${url.origin}${withPrefix}`;
}
