// The daemon's error registry: every name has a status and a message that says what to do, and the
// README documents each one (the add-on and the tray show these messages to artists).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DAEMON_ERROR_NAMES, DAEMON_ERRORS } from '../../shared/daemon/errors.js';
import { ERROR_NAMES } from '../../shared/errors.js';

describe('daemon error registry', () => {
  it('gives every error a 4xx/5xx status and a message that says what to do', () => {
    for (const name of DAEMON_ERROR_NAMES) {
      expect(DAEMON_ERRORS[name].status, name).toBeGreaterThanOrEqual(400);
      expect(DAEMON_ERRORS[name].message.length, name).toBeGreaterThan(30);
    }
  });

  it('never reuses a service error name, so a client can tell who answered', () => {
    expect(DAEMON_ERROR_NAMES.filter((n) => (ERROR_NAMES as string[]).includes(n))).toEqual([]);
  });

  it('documents every daemon error in the README with its status', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    for (const name of DAEMON_ERROR_NAMES) {
      expect(readme, name).toMatch(new RegExp(`\\|\\s*\`${name}\`\\s*\\|\\s*${DAEMON_ERRORS[name].status}\\s*\\|`));
    }
  });
});
