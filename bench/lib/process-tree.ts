// CPU time of a benchmark's whole process tree, for the load meter (machine.ts). A process's
// reaped children's time reaches it through cutime, but not every descendant is reaped inside the
// tree: a sandboxed Blender runs under bwrap in a PID namespace of its own, and when the worker
// kills a warm Blender (SIGKILL to bwrap), bwrap's namespace init dies by its death signal and its
// Blender ends up reaped by the host's init, its CPU time with it. The meter then counted the
// bench's own Blender as "other programs" (about 1.5 cores in bench:estimate on an idle machine).
// So the tree is sampled: every descendant seen is remembered, and one that leaves the tree (a
// parent outside it) or ends without its parent's reaped time growing to cover it counts by what
// it had used when last seen. Pure apart from the injected /proc reader.
import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc/PID/stat shows it; times in ms. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** Start time (clock ticks after boot): with the pid, names one process across pid reuse. */
  start: string;
  /** utime + stime. */
  own: number;
  /** cutime + cstime: its reaped children's (and their reaped children's) time. */
  reaped: number;
}

/** Parses /proc/PID/stat (the command name may hold spaces and parentheses); null if unreadable. */
export function parseStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  const pid = Number(text.slice(0, text.indexOf(' ')));
  if (close < 0 || !Number.isInteger(pid)) return null;
  const f = text.slice(close + 2).split(' ');
  // Fields after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14) ... starttime(19); USER_HZ 100.
  const n = (i: number) => Number(f[i]) * 10;
  return { pid, ppid: Number(f[1]), start: f[19] ?? '', own: n(11) + n(12), reaped: n(13) + n(14) };
}

/** Every process of the machine, from /proc (those gone while read are skipped). */
export function readProcs(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = parseStat(readFileSync(`/proc/${d}/stat`, 'utf8'));
      if (s) out.push(s);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

interface Seen {
  stat: ProcStat;
  /** Its total (own + reaped) when first seen: what it used before the meter started counting it. */
  base: number;
  /** It left the tree alive (adopted outside it) or ended unreaped by the tree: counted on its own. */
  escaped: boolean;
  gone: boolean;
  /** The poll that found it gone. */
  goneAt?: number;
}

const total = (s: ProcStat) => s.own + s.reaped;
const key = (s: Pick<ProcStat, 'pid' | 'start'>) => `${s.pid}:${s.start}`;

/**
 * Samples the tree under `root` (default this process) with poll(); ticks() is the CPU the tree
 * used since the first poll: the root's own and reaped time, every descendant still alive, and
 * every one that escaped. A descendant that lives and ends between two polls is seen only through
 * its parent's reaped time (a reaped one), or not at all (an escaped one): poll often.
 */
export class TreeMeter {
  private readonly seen = new Map<string, Seen>();
  private rootBase = 0;
  private rootNow = 0;
  /** The root's stat at the last poll: its reaped time's growth says which of its children it reaped. */
  private rootStat: ProcStat | undefined;
  private started = false;
  private polls = 0;

  constructor(
    private readonly read: () => ProcStat[] = readProcs,
    private readonly root: number = process.pid,
  ) {}

  poll(): void {
    const procs = this.read();
    const byPid = new Map(procs.map((p) => [p.pid, p] as const));
    const rootStat = byPid.get(this.root);
    const rootPrev = this.rootStat;
    if (rootStat) {
      this.rootNow = total(rootStat);
      if (!this.started) this.rootBase = this.rootNow;
      this.rootStat = rootStat;
    }
    // The tree now: descendants of the root by parent links, plus those remembered (still tracked when adopted).
    const inTree = new Set<number>([this.root]);
    const children = new Map<number, ProcStat[]>();
    for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
    const stack = [this.root];
    const live = new Map<string, ProcStat>();
    while (stack.length) {
      for (const c of children.get(stack.pop()!) ?? []) {
        if (inTree.has(c.pid)) continue;
        inTree.add(c.pid);
        live.set(key(c), c);
        stack.push(c.pid);
      }
    }
    const before = new Map([...this.seen].map(([k, s]) => [k, { ...s.stat }] as const));
    if (rootPrev) before.set('root', rootPrev);
    for (const [k, s] of this.seen) {
      if (s.gone) continue;
      const now = byPid.get(s.stat.pid);
      if (now && key(now) === k) {
        s.stat = now;
        // Alive but no longer under the root: adopted by init or another subreaper.
        if (!live.has(k)) s.escaped = true;
      } else {
        s.gone = true;
        s.goneAt = this.polls;
      }
    }
    for (const [k, p] of live)
      if (!this.seen.has(k))
        this.seen.set(k, { stat: p, base: this.started ? 0 : total(p), escaped: false, gone: false });
    this.judgeEnded(before, byPid);
    this.started = true;
    this.polls++;
  }

  /**
   * The descendants that ended since the last poll: reaped inside the tree when their last parent
   * (or, that gone too, the nearest ancestor still alive) gained in reaped time at least half what
   * they had used; else escaped.
   */
  private judgeEnded(before: Map<string, ProcStat>, byPid: Map<number, ProcStat>): void {
    const ended = [...this.seen.values()].filter((s) => s.goneAt === this.polls && !s.escaped);
    const groups = new Map<number, Seen[]>();
    const alive = (pid: number) =>
      pid === this.root || [...this.seen.values()].some((s) => s.stat.pid === pid && !s.gone);
    for (const s of ended) {
      let parent = s.stat.ppid;
      // Up to the nearest ancestor still alive, through parents that ended in the same interval.
      for (let hop = 0; hop < 64 && !alive(parent); hop++) {
        const up = ended.find((e) => e.stat.pid === parent);
        if (!up) break;
        parent = up.stat.ppid;
      }
      groups.set(parent, [...(groups.get(parent) ?? []), s]);
    }
    for (const [parent, group] of groups) {
      const prev = [...before.values()].find((p) => p.pid === parent);
      const now = byPid.get(parent);
      const grew = now && prev ? now.reaped - prev.reaped : 0;
      const expected = group.reduce((a, s) => a + total(s.stat), 0);
      if (grew < 0.5 * expected) for (const s of group) s.escaped = true;
    }
  }

  /** CPU ms the tree used since the first poll. */
  ticks(): number {
    let sum = this.rootNow - this.rootBase;
    for (const s of this.seen.values()) if (!s.gone || s.escaped) sum += Math.max(0, total(s.stat) - s.base);
    return sum;
  }
}
