// The operator's fair-share weights: how the queue divides slot time between the groups waiting.
// Declared for its consumers (the service applying the config file at start, the admin CLI).

/** Fair-share weights by group, kept with the queue so every process sharing it uses the same. */
export interface ShareWeights {
  /**
   * Sets a group's weight (a positive number; a group without one weighs 1). A group `ws/user`
   * without its own weight takes its workspace's (`ws`). Applies to tasks enqueued from now on.
   */
  setShareWeight(group: string, weight: number): Promise<void>;
  /** Every weight set, by group. */
  shareWeights(): Promise<Record<string, number>>;
}
