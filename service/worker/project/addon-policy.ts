// The farm's policy on add-ons a project bundles (--bundled-addons): their code is tenant code, so
// it runs only inside the sandbox, and a farm that turns them off says so in the job's analysis
// instead of rendering a scene quietly without them.
import path from 'node:path';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import type { AnalysisWarning } from '../../../shared/api/scene.js';
import type { PackManifest } from '../../../shared/pack/manifest.js';
import { resolveBundledAddons, type ResolvedAddon } from './project-files.js';

/** The bundled add-ons the job would enable that the policy refuses (none under `sandboxed`). */
export function refusedAddons(policy: 'sandboxed' | 'off', wanted: readonly ResolvedAddon[]): ResolvedAddon[] {
  return policy === 'off' ? [...wanted] : [];
}

/** The non-blocking warning that names the refused add-ons and what the artist can do. */
export function addonRefusedWarning(refused: readonly ResolvedAddon[]): AnalysisWarning {
  const names = refused.map((a) => (a.name && a.name !== a.id ? `${a.name} (${a.id})` : a.id)).join(', ');
  return {
    code: 'ADDON_REFUSED',
    blocking: false,
    message:
      `The project bundles add-ons this farm does not run: ${names}. Its operator turned bundled add-ons off ` +
      '(--bundled-addons off), so the render runs without them and whatever they add to the scene is missing. ' +
      "Bake or apply the add-ons' results in the .blend, use add-ons that ship with Blender, or ask the operator.",
  };
}

/**
 * What a render enables: the bundled add-ons' folders (put first on sys.path) and, when
 * the policy changes them, the ids.
 */
export interface RenderAddons {
  paths: string[];
  /** Add-on ids to enable; undefined = those of `final.addonsToUse`. */
  ids?: string[];
}

/**
 * The add-ons a render enables under the policy. Checked again here, not only at validation: a
 * job validated by another worker, or a render request naming bundled add-ons, must not bring
 * tenant code into a Blender whose worker turned it off.
 */
export function renderAddons(
  policy: 'sandboxed' | 'off',
  manifest: PackManifest | null | undefined,
  final: Pick<FinalConfig, 'addonsToUse' | 'bundledAddonPathsToUse'>,
  root: string,
): RenderAddons {
  if (policy === 'off') {
    const bundledIds = new Set((manifest?.addons ?? []).map((a) => a.id));
    return { paths: [], ids: (final.addonsToUse ?? []).map((a) => a.id).filter((id) => !bundledIds.has(id)) };
  }
  // Bundled add-ons load from the unpacked project: Blender imports each from the folder holding it.
  const bundled = resolveBundledAddons(manifest, final.addonsToUse, final.bundledAddonPathsToUse, { root });
  return { paths: [...new Set(bundled.map((a) => path.dirname(a.path.replace(/\/__init__\.py$/, ''))))] };
}
