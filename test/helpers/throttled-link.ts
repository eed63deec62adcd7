// A slow link to a service on loopback, for tests that need an upload to last while something
// happens on the artist's side: a network namespace joined to this one by a veth pair whose both
// ends are shaped with tc htb (as bench/lib/netns.ts does for bench:resubmit; the kernel has no
// netem). A TCP forwarder runs inside the namespace; a relay in this process takes its
// connections to the service. Every byte a client sends to `origin` crosses the shaped link twice
// (there and back), so the rate is what it gets. Needs root, `ip` and `tc`: without them
// startThrottledLink answers why, and the caller skips (outside CI only).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';

export interface ThrottledLink {
  /** `http://IP:PORT` inside the namespace: connect here to go through the shaped link. */
  origin: string;
  /** Port of the service on 127.0.0.1; set before the first connection (the service may need `origin` to start). */
  targetPort: number | undefined;
  close(): Promise<void>;
}

let counter = 0;

/** Forwards every connection on IP:0 (port printed on stdout) to TARGET_IP:TARGET_PORT. */
const FORWARDER = `
const net = require('node:net');
const [ip, targetIp, targetPort] = process.argv.slice(1);
const server = net.createServer((c) => {
  const up = net.connect(Number(targetPort), targetIp);
  c.pipe(up).pipe(c);
  const end = () => { c.destroy(); up.destroy(); };
  c.on('error', end); up.on('error', end); c.on('close', end); up.on('close', end);
});
server.listen(0, ip, () => console.log(server.address().port));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

function run(cmd: string, args: string[]): { ok: boolean; err: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, err: (r.stderr || r.error?.message || `exit ${r.status}`).trim() };
}

/** Why this machine cannot make the link (not root, no ip/tc), or undefined when it can. */
export function throttledLinkUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a throttled link needs root (network namespaces and tc)';
  for (const tool of ['ip', 'tc'])
    if (!run(tool, ['-V']).ok) return `a throttled link needs \`${tool}\` (Debian: iproute2)`;
  return undefined;
}

/** A link shaped to `rateKbit` kbit/s each way to the service at 127.0.0.1:`targetPort` (set on the answer). */
export async function startThrottledLink(opts: { rateKbit: number }): Promise<ThrottledLink> {
  const why = throttledLinkUnavailable();
  if (why) throw new Error(why);
  const n = counter++ % 60;
  const id = `${process.pid % 100000}${n}`;
  const ns = `rbtest-${id}`;
  const hostDev = `rtl${id}h`;
  const nsDev = `rtl${id}n`;
  const k = process.pid % 250;
  const hostIp = `10.217.${k}.${n * 4 + 1}`;
  const nsIp = `10.217.${k}.${n * 4 + 2}`;
  const steps: Array<[string, string[]]> = [
    ['ip', ['netns', 'add', ns]],
    ['ip', ['link', 'add', hostDev, 'type', 'veth', 'peer', 'name', nsDev, 'netns', ns]],
    ['ip', ['addr', 'add', `${hostIp}/30`, 'dev', hostDev]],
    ['ip', ['-n', ns, 'addr', 'add', `${nsIp}/30`, 'dev', nsDev]],
    ['ip', ['link', 'set', hostDev, 'up']],
    ['ip', ['-n', ns, 'link', 'set', nsDev, 'up']],
    ['ip', ['-n', ns, 'link', 'set', 'lo', 'up']],
    ['tc', ['qdisc', 'add', 'dev', hostDev, 'root', 'handle', '1:', 'htb', 'default', '10']],
    [
      'tc',
      [
        'class',
        'add',
        'dev',
        hostDev,
        'parent',
        '1:',
        'classid',
        '1:10',
        'htb',
        'rate',
        `${opts.rateKbit}kbit`,
        'ceil',
        `${opts.rateKbit}kbit`,
      ],
    ],
    ['tc', ['-n', ns, 'qdisc', 'add', 'dev', nsDev, 'root', 'handle', '1:', 'htb', 'default', '10']],
    [
      'tc',
      [
        '-n',
        ns,
        'class',
        'add',
        'dev',
        nsDev,
        'parent',
        '1:',
        'classid',
        '1:10',
        'htb',
        'rate',
        `${opts.rateKbit}kbit`,
        'ceil',
        `${opts.rateKbit}kbit`,
      ],
    ],
  ];
  // Deleting the namespace deletes its veth end and with it the peer here.
  const removeNs = () => run('ip', ['netns', 'del', ns]);
  removeNs();
  for (const [cmd, args] of steps) {
    const r = run(cmd, args);
    if (!r.ok) {
      removeNs();
      throw new Error(`${cmd} ${args.join(' ')}: ${r.err}`);
    }
  }
  const relay = net.createServer((c) => {
    if (link.targetPort === undefined) return void c.destroy();
    const up = net.connect(link.targetPort, '127.0.0.1');
    c.pipe(up).pipe(c);
    const end = () => (c.destroy(), up.destroy());
    for (const s of [c, up]) s.on('error', end).on('close', end);
  });
  relay.listen(0, hostIp);
  await once(relay, 'listening');
  const relayPort = (relay.address() as net.AddressInfo).port;
  // stdin stays open: the forwarder exits when this process does, whatever kills it.
  const forwarder: ChildProcess = spawn(
    'ip',
    ['netns', 'exec', ns, process.execPath, '-e', FORWARDER, nsIp, hostIp, String(relayPort)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    forwarder.once('error', reject);
    forwarder.once('exit', (code) => reject(new Error(`the forwarder in ${ns} exited (${code}) before listening`)));
    forwarder.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
  }).catch((err: unknown) => {
    relay.close();
    removeNs();
    throw err;
  });
  const link: ThrottledLink = {
    origin: `http://${nsIp}:${port}`,
    targetPort: undefined,
    async close() {
      const exited = forwarder.exitCode === null ? once(forwarder, 'exit') : Promise.resolve();
      forwarder.stdin?.end();
      forwarder.kill();
      await exited;
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      removeNs();
    },
  };
  return link;
}
