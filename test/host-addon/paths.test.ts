// Runs the plain-python unit tests of the add-on's bpy-free modules with the system python3:
// paths.py (test_paths.py), background.py (test_background.py), jobs_state.py and submit_body.py
// (test_jobs_state.py), opener.py (test_opener.py), transfer_text.py with the activity's progress line
// (test_transfer_text.py), the 4.2 extension manifest (test_manifest.py, tomllib), daemon_client.py's
// loopback-only rule (test_loopback.py) and the add-on's structural rules (test_rules.py: __init__ only
// registers, no bpy on the worker thread, timeouts). daemon_client.py
// runs against the real daemon in daemon-client.test.ts.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

const SUITES = {
  'paths.py': 'test_paths.py',
  'background.py': 'test_background.py',
  'jobs_state.py and submit_body.py (save_plan included)': 'test_jobs_state.py',
  'opener.py (Open folder)': 'test_opener.py',
  'transfer_text.py (pack and upload progress lines)': 'test_transfer_text.py',
  'blender_manifest.toml (Blender 4.2 extension manifest)': 'test_manifest.py',
  'daemon_client.py talks to loopback only (the daemon address preference)': 'test_loopback.py',
  'the add-on rules (registration-only __init__, no bpy on the worker thread, timeouts)': 'test_rules.py',
} as const;

describe('host-addon/renderbridge bpy-free modules', () => {
  for (const [module, file] of Object.entries(SUITES)) {
    it(`${module} passes its python unit tests`, async () => {
      const script = fileURLToPath(new URL(`./${file}`, import.meta.url));
      const { stderr } = await run('python3', [script, '-v'], { timeout: 60_000 }).catch(
        (err: { stderr?: string; stdout?: string }) => {
          throw new Error(`python tests failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        },
      );
      expect(stderr).toMatch(/\nOK\s*$/);
      expect(stderr).toMatch(/Ran ([1-9]\d*) tests/);
    });
  }
});
