// The daemon's error registry: every name has a status and a message that says what to do, and the
// docs/reference/errors.md documents each one (the add-on and the tray show these messages to artists).
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

  it('documents every daemon error in docs/reference/errors.md, "Daemon errors", with its status', async () => {
    const page = await readFile(new URL('../../docs/reference/errors.md', import.meta.url), 'utf8');
    const start = page.indexOf('\n## Daemon errors\n');
    expect(start, 'the "Daemon errors" section').toBeGreaterThanOrEqual(0);
    const section = page.slice(start);
    for (const name of DAEMON_ERROR_NAMES) {
      expect(section, name).toMatch(new RegExp(`\\|\\s*\`${name}\`\\s*\\|\\s*${DAEMON_ERRORS[name].status}\\s*\\|`));
    }
  });
});
