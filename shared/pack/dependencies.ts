// What the add-on's dependency collector reports about a .blend (run inside the artist's
// Blender, or headless by the daemon), and what the daemon's packer takes as input.
import { z } from 'zod';
import { DependencyKind } from './manifest.js';

/** How a dependency's path names its files. */
export const DependencyPattern = z.enum([
  /** One file. */
  'file',
  /** `<UDIM>` / `<UVTILE>` tiles: every file matching the pattern. */
  'udim',
  /** Numbered frames: the path is one frame; every file with the same stem and another number. */
  'sequence',
  /** Everything under a folder (simulation and fluid caches). */
  'directory',
]);
export type DependencyPattern = z.infer<typeof DependencyPattern>;

export const CollectedDependency = z.object({
  /**
   * The path exactly as the data block holds it: `//textures/wood.png`, `/mnt/assets/wood.png`,
   * `C:\\maps\\a.<UDIM>.png`.
   */
  path: z.string().min(1).max(4096),
  /** The same path made absolute on the packing machine (`//` resolved against `blendFile`). */
  absolute: z.string().min(1).max(4096),
  kind: DependencyKind,
  pattern: DependencyPattern.default('file'),
  /** Absolute files the collector found for a pattern; when absent the packer expands it itself. */
  files: z.array(z.string().max(4096)).max(1_000_000).optional(),
  /** Absolute path of the .blend that holds `path` (the main file or a linked library). */
  blendFile: z.string().min(1).max(4096),
  /** Data blocks that use it, e.g. `IMwood.png`, `LIprops.blend`. */
  usedBy: z.array(z.string().max(1024)).max(1000).default([]),
});
export type CollectedDependency = z.infer<typeof CollectedDependency>;
export type CollectedDependencyInput = z.input<typeof CollectedDependency>;

/** Output of host-addon/renderbridge/dependencies.py (one JSON document). */
export const CollectedDependencies = z.object({
  version: z.literal(1),
  /** Absolute path of the main .blend. */
  blendFile: z.string().min(1).max(4096),
  blenderVersion: z.string().max(64).optional(),
  dependencies: z.array(CollectedDependency).max(200_000),
});
export type CollectedDependencies = z.infer<typeof CollectedDependencies>;

/** An add-on the artist chose to send with the project (a folder with `__init__.py`, or one `.py`). */
export const AddonToBundle = z.object({
  /** Python module name. */
  module: z.string().min(1).max(1024),
  name: z.string().max(1024),
  /** Absolute path of its folder or `.py` file. */
  path: z.string().min(1).max(4096),
  addonType: z.string().max(64).default('addon'),
  /** False lists it in the preflight as available but leaves it out of the archive. */
  selected: z.boolean().default(true),
});
export type AddonToBundle = z.infer<typeof AddonToBundle>;
