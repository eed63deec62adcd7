// The farm's bundled add-on policy: which add-ons a render enables under each setting, the
// warning that names refused ones, and the settings a worker refuses to start with.
import { describe, expect, it } from 'vitest';
import { addonRefusedWarning, refusedAddons, renderAddons } from '../../../service/worker/project/addon-policy.js';
import { bundledAddonPolicy } from '../../../service/worker/runtime/env.js';
import type { PackManifest } from '../../../shared/pack/manifest.js';

const manifest = {
  version: 1,
  sceneFile: 'scene.blend',
  addons: [
    { id: 'evil', name: 'Evil', path: 'addons/evil' },
    { id: 'rigs', name: 'rigs', path: 'addons/rigs.py' },
  ],
} as unknown as PackManifest;

describe('bundled add-on policy', () => {
  it('auto follows the sandbox; sandboxed without it is refused at start with what to do', () => {
    expect(bundledAddonPolicy({ sandbox: true, bundledAddons: 'auto' })).toBe('sandboxed');
    expect(bundledAddonPolicy({ sandbox: false, bundledAddons: 'auto' })).toBe('off');
    expect(bundledAddonPolicy({ sandbox: true, bundledAddons: 'off' })).toBe('off');
    expect(() => bundledAddonPolicy({ sandbox: false, bundledAddons: 'sandboxed' })).toThrow(
      /needs the sandbox: drop --no-sandbox, or pass --bundled-addons off/,
    );
  });

  it("sandboxed: the render puts the bundled folders on sys.path and enables the job's ids", () => {
    const got = renderAddons(
      'sandboxed',
      manifest,
      { addonsToUse: undefined, bundledAddonPathsToUse: undefined },
      '/w/job/project',
    );
    expect(got.paths).toEqual(['/w/job/project/addons']);
    expect(got.ids).toBeUndefined();
  });

  it("off: no bundled folder, no bundled id, whatever the job names; Blender's own add-ons stay", () => {
    const got = renderAddons(
      'off',
      manifest,
      {
        addonsToUse: [
          { id: 'evil', name: 'Evil' },
          { id: 'sun_position', name: 'Sun Position' },
        ],
        bundledAddonPathsToUse: ['addons/evil'],
      },
      '/w/job/project',
    );
    expect(got).toEqual({ paths: [], ids: ['sun_position'] });
  });

  it('names the refused add-ons and the policy in the warning', () => {
    const refused = refusedAddons('off', [
      { id: 'evil', name: 'Evil', relativePath: 'addons/evil', path: '/p/addons/evil' },
      { id: 'rigs', name: 'rigs', relativePath: 'addons/rigs.py', path: '/p/addons/rigs.py' },
    ]);
    expect(refusedAddons('sandboxed', refused)).toEqual([]);
    const w = addonRefusedWarning(refused);
    expect(w).toMatchObject({ code: 'ADDON_REFUSED', blocking: false });
    expect(w.message).toMatch(/does not run: Evil \(evil\), rigs\./);
    expect(w.message).toMatch(/--bundled-addons off/);
  });
});
