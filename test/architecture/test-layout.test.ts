// test/ mirrors the packages, so a newcomer who changes `zip/` finds its tests in `test/zip/` and nowhere
// else. Only the cross-package folders have no package of their own.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Folders of test/ that test several packages at once, or serve the others. */
const CROSS_PACKAGE = ['architecture', 'e2e', 'fixtures', 'helpers'];

const dirs = (at: string) => readdirSync(at).filter((name) => statSync(path.join(at, name)).isDirectory());

describe('test/ layout', () => {
  it('names each folder after a package of the repository, or a cross-package folder', () => {
    const packages = new Set(
      dirs(root).filter((name) => !name.startsWith('.') && name !== 'node_modules' && name !== 'test'),
    );
    for (const folder of dirs(path.join(root, 'test'))) {
      expect(packages.has(folder) || CROSS_PACKAGE.includes(folder), `test/${folder}/ names no package`).toBe(true);
    }
  });

  it('mirrors the service: each folder under test/service/ names a folder of service/', () => {
    const service = new Set(dirs(path.join(root, 'service')));
    // The API suite tests service/routes through HTTP; the conformance suites test service/ports' adapters;
    // the scale suites run the service's processes together.
    const byRole = ['api', 'conformance', 'scale'];
    for (const folder of dirs(path.join(root, 'test/service'))) {
      expect(
        service.has(folder) || byRole.includes(folder),
        `test/service/${folder}/ names no folder of service/`,
      ).toBe(true);
    }
  });

  it('gives every package with code a test folder', () => {
    for (const pkg of [
      'shared',
      'service',
      'blender',
      'zip',
      'daemon',
      'user-config',
      'cli',
      'host-addon',
      'electron',
    ]) {
      expect(dirs(path.join(root, 'test')), pkg).toContain(pkg);
    }
  });
});
