// The fair-share weights of the service's settings (`--share-weight ws_1=2`), checked at start: a
// mistyped weight stops the service with what to write instead of sharing the farm wrongly.

/** `group=weight` entries as [group, weight] pairs; throws on an entry that is not one. */
export function parseShareWeights(entries: readonly string[]): [string, number][] {
  return entries.map((entry) => {
    const i = entry.lastIndexOf('=');
    const group = entry.slice(0, i).trim();
    const weight = Number(entry.slice(i + 1));
    if (i <= 0 || !group || !(weight > 0) || !Number.isFinite(weight))
      throw new Error(
        `share weight ${JSON.stringify(entry)}: write <workspaceId>=<weight> or <workspaceId>/<userId>=<weight> ` +
          `with a positive weight, e.g. ws_1=2`,
      );
    return [group, weight];
  });
}
