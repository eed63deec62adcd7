// Which Blender version renders a file, among the builds a farm has. A build opens files of its own
// major version (an older minor too, with what newer minors added missing) and of every older major;
// never a newer major: 5.x writes a layout 4.x calls "not a blend file", and 4.x files lose data in
// 3.x. Among the builds that can open the file:
//   1. the same major.minor as asked (the artist's `hostVersionForRender`, else the file's own);
//   2. else the nearest newer one: Blender reads older files well, and the closest changes the least;
//   3. else the newest older one (same major only, as above), with a note.
// Pure: the caller brings the farm's builds (its own and the registry's) and the file's header.

export interface VersionLike {
  major: number;
  minor: number;
  /** Absent in a header (which holds major.minor only). */
  patch?: number;
}

export interface Routed<T extends VersionLike> {
  /** The chosen build's version (the highest patch of its major.minor). */
  version: T;
  /** `5.2`: what tasks require and what placement matches. */
  minor: string;
  /** True when the asked major.minor is what renders. */
  exact: boolean;
  /** Why another version renders, in one sentence, for finalConfig's notes and the analysis warnings. */
  note?: string;
}

const text = (v: VersionLike) => `${v.major}.${v.minor}`;
const cmp = (a: VersionLike, b: VersionLike) =>
  a.major - b.major || a.minor - b.minor || (a.patch ?? 0) - (b.patch ?? 0);

/** Whether a build of version `build` can open a file saved by `file`. */
export function canOpen(build: VersionLike, file: VersionLike): boolean {
  return build.major >= file.major;
}

/**
 * The version that renders a file saved by `file`, asked for `requested` (default: the file's own
 * version), among `available`; undefined when no build can open the file at all.
 */
export function routeVersion<T extends VersionLike>(
  available: readonly T[],
  file: VersionLike,
  requested?: VersionLike,
): Routed<T> | undefined {
  const usable = available.filter((b) => canOpen(b, file)).sort(cmp);
  if (usable.length === 0) return undefined;
  const want = requested ?? file;
  const best = (pick: T) => usable.filter((b) => b.major === pick.major && b.minor === pick.minor).pop()!;
  const same = usable.find((b) => b.major === want.major && b.minor === want.minor);
  if (same) return { version: best(same), minor: text(same), exact: true };
  const newer = usable.find((b) => cmp(b, { major: want.major, minor: want.minor, patch: 0 }) > 0);
  const why = !requested
    ? `The file was saved with Blender ${text(file)}, which the farm does not have`
    : canOpen(requested, file)
      ? `Blender ${text(requested)} was asked for, which the farm does not have`
      : `Blender ${text(requested)} was asked for, but it cannot open a file saved with Blender ${text(file)}`;
  if (newer) {
    const v = best(newer);
    return {
      version: v,
      minor: text(v),
      exact: false,
      note: `${why}: ${fmt(v)}, the closest newer build, renders it.`,
    };
  }
  const v = best(usable[usable.length - 1]!);
  return {
    version: v,
    minor: text(v),
    exact: false,
    note:
      `${why}: ${fmt(v)}, the newest build that opens it, renders it; it is older, so what newer versions ` +
      `added may be missing or render differently.`,
  };
}

function fmt(v: VersionLike): string {
  return v.patch !== undefined ? `Blender ${v.major}.${v.minor}.${v.patch}` : `Blender ${v.major}.${v.minor}`;
}

/**
 * Why no build of the farm opens the file, in words, with what to install: the message of a job
 * that fails validation for it.
 */
export function noBuildMessage(file: VersionLike, available: readonly VersionLike[]): string {
  const have = [...new Set([...available].sort(cmp).map(fmt))];
  return (
    `This file was saved with Blender ${text(file)}, and no Blender on the farm can open it (the farm has ` +
    `${have.length ? have.join(', ') : 'no Blender'}). Ask the farm's operator to install Blender ${text(file)} ` +
    'or newer on a worker (unpack the official release archive and pass its folder with --blender), or save ' +
    'the file with one of those versions.'
  );
}
