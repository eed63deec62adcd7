// The fast loop (`npm run test:unit`) is chosen by what each test file uses (test/unit-selection.ts):
// a newcomer's quick run must never start Blender, a server or a browser, and must still cover the
// pure parts (domain rules, client, CLI options, architecture).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { unitTestFiles } from '../unit-selection.js';

const files = unitTestFiles(fileURLToPath(new URL('../..', import.meta.url)));

describe('the fast test loop', () => {
  it('leaves out every test that renders, needs a server or a browser, or opts out', () => {
    for (const heavy of [
      'test/e2e/estimate.test.ts', // real Blender through a helper (startE2E)
      'test/blender/nice-matrix.test.ts', // Blender 3.4/4.3/5.2
      'test/service/conformance/postgres.test.ts', // PostgreSQL
      'test/service/dashboard/estimate.test.ts', // Chromium
      'test/service/api/hostile.test.ts', // `// test-loop: full`
    ]) {
      expect(files, heavy).not.toContain(heavy);
    }
  });

  it('keeps the pure tests', () => {
    for (const unit of [
      'test/service/domain/frame-ranges.test.ts',
      'test/service/domain/job-lifecycle.test.ts',
      'test/architecture/layers.test.ts',
      'test/service/api/jobs.test.ts',
    ]) {
      expect(files).toContain(unit);
    }
  });
});
