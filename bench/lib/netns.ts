// Two hosts on one machine for network benchmarks: an "artist" and a "farm" network namespace
// joined by a veth pair whose both ends are shaped with tc htb (the kernel has no netem, so delay
// comes from bench/lib/delay-proxy.ts), plus an unshaped control pair from this namespace to the
// farm, so the benchmark can watch the service without touching the measured link. Needs root.
// Everything is removed when the process exits, also on failure or Ctrl-C (children.ts atExit),
// and leftovers of a run that was killed outright are removed at the next start.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { atExit } from './children.js';

const PREFIX = 'rbbench';

export interface LinkCounters {
  /** The artist veth's tx_bytes (ip -s link): every frame sent, one header per GSO super-packet. */
  vethTxBytes: number;
  /** Bytes the artist end's htb qdisc sent: frames as on the wire, headers of every segment counted. */
  wireBytes: number;
}

export interface Netns {
  artist: string;
  farm: string;
  /** Artist end of the shaped link. */
  artistIp: string;
  /** Farm end of the shaped link (the delay proxy listens here). */
  farmIp: string;
  /** Farm end of the control link, reachable from this namespace. */
  controlIp: string;
  rateMbit: number;
  /** Command and arguments that run `cmd args` inside namespace `ns` (ip netns exec execs, so the pid is cmd's). */
  exec(ns: string, cmd: string, args: string[]): [string, string[]];
  counters(): LinkCounters;
  /** Takes both ends of the shaped link down (routes go with them) or brings them up again. */
  setLink(up: boolean): void;
  /** The qdisc lines of both ends, for the results. */
  describeShaping(): string;
}

function ip(args: string[], opts: { quiet?: boolean } = {}): string {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0 && !opts.quiet) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout;
}

function tc(args: string[]): string {
  const r = spawnSync('tc', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tc ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout;
}

/** Removes namespaces and control veths of earlier runs whose process is gone (a kill -9 skips atExit). */
export function removeStale(): void {
  const names = ip(['netns', 'list'], { quiet: true })
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n.startsWith(PREFIX));
  for (const ns of names) {
    const pid = /-(\d+)$/.exec(ns)?.[1];
    if (pid && !existsSync(`/proc/${pid}`)) ip(['netns', 'del', ns], { quiet: true });
  }
}

function shape(ns: string, dev: string, rateMbit: number): void {
  // quantum given explicitly: htb's default (rate / r2q) is above its 200,000-byte limit at this rate.
  tc(['-n', ns, 'qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'htb', 'default', '10']);
  tc([
    '-n',
    ns,
    'class',
    'add',
    'dev',
    dev,
    'parent',
    '1:',
    'classid',
    '1:10',
    'htb',
    'rate',
    `${rateMbit}mbit`,
    'ceil',
    `${rateMbit}mbit`,
    'quantum',
    '60000',
  ]);
}

/** Creates the namespaces, links, addresses and shaping; checks that root can do all that. */
export function createNetns(opts: { rateMbit: number }): Netns {
  if (process.getuid?.() !== 0) throw new Error('this benchmark creates network namespaces: run it as root');
  removeStale();
  const id = process.pid;
  const artist = `${PREFIX}-a-${id}`;
  const farm = `${PREFIX}-f-${id}`;
  const aDev = `rba${id}`;
  const fDev = `rbf${id}`;
  const cRoot = `rbc${id}`;
  const cFarm = `rbd${id}`;
  const k = id % 250;
  const net = {
    artistIp: `10.213.${k}.1`,
    farmIp: `10.213.${k}.2`,
    controlRoot: `10.214.${k}.1`,
    controlIp: `10.214.${k}.2`,
  };
  atExit(() => {
    // Deleting a namespace deletes its veth ends and with them their peers (the control end here too).
    ip(['netns', 'del', artist], { quiet: true });
    ip(['netns', 'del', farm], { quiet: true });
    ip(['link', 'del', cRoot], { quiet: true });
  });
  ip(['netns', 'add', artist]);
  ip(['netns', 'add', farm]);
  ip(['link', 'add', aDev, 'netns', artist, 'type', 'veth', 'peer', 'name', fDev, 'netns', farm]);
  ip(['link', 'add', cRoot, 'type', 'veth', 'peer', 'name', cFarm, 'netns', farm]);
  ip(['-n', artist, 'addr', 'add', `${net.artistIp}/24`, 'dev', aDev]);
  ip(['-n', farm, 'addr', 'add', `${net.farmIp}/24`, 'dev', fDev]);
  ip(['addr', 'add', `${net.controlRoot}/24`, 'dev', cRoot]);
  ip(['-n', farm, 'addr', 'add', `${net.controlIp}/24`, 'dev', cFarm]);
  for (const [ns, dev] of [
    [artist, 'lo'],
    [artist, aDev],
    [farm, 'lo'],
    [farm, fDev],
    [farm, cFarm],
  ] as const)
    ip(['-n', ns, 'link', 'set', dev, 'up']);
  ip(['link', 'set', cRoot, 'up']);
  shape(artist, aDev, opts.rateMbit);
  shape(farm, fDev, opts.rateMbit);

  return {
    artist,
    farm,
    artistIp: net.artistIp,
    farmIp: net.farmIp,
    controlIp: net.controlIp,
    rateMbit: opts.rateMbit,
    exec: (ns, cmd, args) => ['ip', ['netns', 'exec', ns, cmd, ...args]],
    counters() {
      const link = JSON.parse(ip(['-n', artist, '-s', '-j', 'link', 'show', 'dev', aDev])) as {
        stats64: { tx: { bytes: number } };
      }[];
      const qdisc = JSON.parse(tc(['-n', artist, '-s', '-j', 'qdisc', 'show', 'dev', aDev])) as {
        kind: string;
        bytes: number;
      }[];
      return { vethTxBytes: link[0]!.stats64.tx.bytes, wireBytes: qdisc.find((q) => q.kind === 'htb')!.bytes };
    },
    setLink(up) {
      ip(['-n', artist, 'link', 'set', aDev, up ? 'up' : 'down']);
      ip(['-n', farm, 'link', 'set', fDev, up ? 'up' : 'down']);
    },
    describeShaping() {
      return [
        ...tc(['-n', artist, 'class', 'show', 'dev', aDev])
          .trim()
          .split('\n')
          .map((l) => `artist ${aDev}: ${l.trim()}`),
        ...tc(['-n', farm, 'class', 'show', 'dev', fDev])
          .trim()
          .split('\n')
          .map((l) => `farm ${fDev}: ${l.trim()}`),
      ].join('\n');
    },
  };
}
