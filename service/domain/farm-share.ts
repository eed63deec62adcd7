// How the farm's slot time is shared now, for people (GET /farm/share, the dashboard): the queue's
// waiting frames per fair-share group, the render slots each group's frames hold in the worker
// registry, and the operator's weights, folded into one row per workspace. Pure rules; the same on
// every queue, as the three adapters answer the same QueueOrder reads.
import type { WorkspaceShare } from '../../shared/api/farm-share.js';
import type { ApiKeyRecord } from '../ports/keys.js';
import type { GroupQueueLoad } from '../ports/queue-order.js';
import type { WorkerRecord } from '../ports/workers.js';
import { workerState } from './workers.js';

/** `ws/user` -> its parts; a group without a submitter part is all workspace. */
function split(group: string): { ws: string; user: string | null } {
  const i = group.indexOf('/');
  return i > 0 ? { ws: group.slice(0, i), user: group.slice(i + 1) } : { ws: group, user: null };
}

/** Jobs of the live workers' busy render slots, one entry per slot (a slot runs one job's frame at a time). */
export function busySlotJobs(workers: readonly WorkerRecord[], now: number): { live: number; jobs: string[] } {
  let live = 0;
  const jobs: string[] = [];
  for (const w of workers) {
    if (workerState(w, now) !== 'running') continue;
    for (const s of w.slots) {
      if (s.device.kind === 'control') continue;
      live++;
      const t = s.tasks[0];
      if (t) jobs.push(t.jobId);
    }
  }
  return { live, jobs };
}

/**
 * Each user of `workspaceId` by the labels of their API keys (the active ones', else the revoked
 * ones'), distinct and sorted, joined by ", ". Keys of other workspaces are never read into it.
 */
export function submitterLabels(keys: readonly ApiKeyRecord[], workspaceId: string): Map<string, string> {
  const byUser = new Map<string, ApiKeyRecord[]>();
  for (const k of keys) if (k.workspaceId === workspaceId) byUser.set(k.userId, [...(byUser.get(k.userId) ?? []), k]);
  const labels = new Map<string, string>();
  for (const [user, ks] of byUser) {
    const active = ks.filter((k) => k.revokedAt === null);
    const names = [...new Set((active.length ? active : ks).map((k) => k.label).filter((l) => l.trim()))].sort();
    if (names.length) labels.set(user, names.join(', '));
  }
  return labels;
}

interface Group {
  group: string;
  ws: string;
  user: string | null;
  running: number;
  load: GroupQueueLoad | undefined;
}

/**
 * The rows of GET /farm/share as `ownWorkspace` sees them. `running`: busy render slots by group;
 * `weights`: the operator's (ShareWeights). A group's weight is its own, else its workspace's
 * divided among the workspace's active groups (as the queues tag them: share-tags.ts, lua-common.ts).
 * `labels`: the own workspace's submitters by user id (submitterLabels); default none.
 */
export function farmShares(
  ownWorkspace: string,
  loads: readonly GroupQueueLoad[],
  running: ReadonlyMap<string, number>,
  weights: Readonly<Record<string, number>>,
  labels: ReadonlyMap<string, string> = new Map(),
): WorkspaceShare[] {
  const loadOf = new Map(loads.map((l) => [l.group, l]));
  const groups = new Map<string, Group>();
  const of = (group: string) => {
    let g = groups.get(group);
    if (!g) groups.set(group, (g = { group, ...split(group), running: 0, load: loadOf.get(group) }));
    return g;
  };
  // Groups measured long ago with nothing open now are left out.
  for (const l of loads) if (l.waitingFrames > 0 || l.pausedFrames > 0) of(l.group);
  for (const [group, n] of running) of(group).running += n;
  const active = (g: Group) => g.running > 0 || (g.load?.waitingFrames ?? 0) > 0;
  const byWs = new Map<string, Group[]>();
  for (const g of groups.values()) byWs.set(g.ws, [...(byWs.get(g.ws) ?? []), g]);
  const weightOf = (g: Group) => {
    const own = weights[g.group];
    if (own !== undefined) return own;
    const n = (byWs.get(g.ws) ?? []).filter(active).length || 1;
    return (weights[g.ws] ?? 1) / n;
  };
  const totalWeight = [...groups.values()].filter(active).reduce((s, g) => s + weightOf(g), 0);
  const busy = [...running.values()].reduce((s, n) => s + n, 0);
  const row = (gs: Group[], userId: string | null) => {
    const weight = gs.reduce((s, g) => s + weightOf(g), 0);
    const act = gs.filter(active).reduce((s, g) => s + weightOf(g), 0);
    const runningSlots = gs.reduce((s, g) => s + g.running, 0);
    const waiting = gs.reduce((s, g) => s + (g.load?.waitingFrames ?? 0), 0);
    const timed = gs.filter((g) => g.load?.secondsPerFrame != null);
    return {
      userId,
      label: userId ? (labels.get(userId) ?? null) : null,
      weight: weight > 0 ? weight : 1,
      entitledShare: totalWeight > 0 ? Math.min(1, act / totalWeight) : 0,
      runningSlots,
      currentShare: busy > 0 ? runningSlots / busy : 0,
      waitingFrames: waiting,
      pausedFrames: gs.reduce((s, g) => s + (g.load?.pausedFrames ?? 0), 0),
      secondsPerFrame: timed.length ? timed.reduce((s, g) => s + g.load!.secondsPerFrame!, 0) / timed.length : null,
    };
  };
  const out: WorkspaceShare[] = [];
  for (const [ws, gs] of byWs) {
    const own = ws === ownWorkspace;
    out.push({
      ...row(gs, null),
      workspaceId: own ? ws : null,
      own,
      submitters: own ? gs.map((g) => row([g], g.user ?? '')).sort((a, b) => b.currentShare - a.currentShare) : [],
    });
  }
  return out.sort((a, b) => Number(b.own) - Number(a.own) || b.currentShare - a.currentShare);
}

/**
 * Seconds until a job with `framesAhead` frames before it starts its next frame: those frames at the
 * mean measured time of the frames waiting (weighted by how many wait), over the live slots. Null
 * when nothing is measured or no slot is live. Frames running now are not counted: a wait of 0
 * means "next in line", which may still be a running frame's length.
 */
export function expectedWait(framesAhead: number, loads: readonly GroupQueueLoad[], liveSlots: number): number | null {
  if (liveSlots <= 0) return null;
  if (framesAhead === 0) return 0;
  const timed = loads.filter((l) => l.secondsPerFrame !== null);
  if (timed.length === 0) return null;
  const weightOf = (l: GroupQueueLoad) => Math.max(1, l.waitingFrames);
  const total = timed.reduce((s, l) => s + weightOf(l), 0);
  const spf = timed.reduce((s, l) => s + l.secondsPerFrame! * weightOf(l), 0) / total;
  return Math.round((framesAhead * spf) / liveSlots);
}
