// Whether the default Blender (RENDERBRIDGE_TEST_BLENDER, else `blender` on PATH) starts. Files
// that render skip where it is missing, with a printed reason, and fail under CI, where a missing
// Blender means the setup broke.
import { spawnSync } from 'node:child_process';

/** True where Blender runs; `what` names the tests in the skip message and the CI failure. */
export function blenderPresent(what: string): boolean {
  const bin = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
  if (spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0) return true;
  if (process.env.CI === 'true')
    throw new Error(`Blender is missing and ${what} must run on CI (apt-get install blender)`);
  console.warn(`skipping ${what}: Blender is not installed (apt-get install blender)`);
  return false;
}
