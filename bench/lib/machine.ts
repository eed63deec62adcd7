// Where a benchmark ran: numbers from different machines are not comparable, so every
// results section states the machine and date it was measured on.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { TreeMeter } from './process-tree.js';

export interface MachineInfo {
  cpu: string;
  cores: number;
  ramGiB: number;
  os: string;
  node: string;
  date: string;
}

function firstMatch(file: string, re: RegExp): string | undefined {
  try {
    return re.exec(readFileSync(file, 'utf8'))?.[1]?.trim();
  } catch {
    return undefined;
  }
}

export function machineInfo(): MachineInfo {
  const distro = firstMatch('/etc/os-release', /^PRETTY_NAME="?([^"\n]*)"?$/m) ?? os.type();
  return {
    // /proc/cpuinfo is Linux-only; os.cpus() is the fallback elsewhere.
    cpu: firstMatch('/proc/cpuinfo', /^model name\s*:\s*(.*)$/m) ?? os.cpus()[0]?.model ?? 'unknown',
    // os.cpus(), not availableParallelism(): the latter shrinks once a benchmark pins itself.
    cores: os.cpus().length,
    ramGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${distro} (kernel ${os.release()})`,
    node: process.version,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

export function machineMarkdown(m: MachineInfo = machineInfo()): string {
  return [
    `- Date: ${m.date}`,
    `- CPU: ${m.cpu}, ${m.cores} cores`,
    `- RAM: ${m.ramGiB} GiB`,
    `- OS: ${m.os}`,
    `- Node: ${m.node}`,
  ].join('\n');
}

/** Busy, stolen (by the hypervisor) and total CPU time of the whole machine, ms (Linux /proc/stat). */
function cpuTicks(): { busy: number; steal: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  // cpu user nice system idle iowait irq softirq steal ...; USER_HZ is 100.
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map((v) => Number(v) * 10);
  const busy = user! + nice! + system! + irq! + softirq!;
  return { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
}

/** CPU time of all kernel threads (children of kthreadd, pid 2), ms: disk writeback runs there. */
function kernelThreadTicks(): number {
  let sum = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (pid === '2' || f[1] === '2') sum += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

/** How often the meter samples the benchmark's process tree (ms): a descendant that escapes it counts as last seen. */
export const TREE_POLL_MS = 250;

export interface OtherLoad {
  /** Other programs (everything but this benchmark, its descendants and kernel threads), in cores. */
  others: number;
  /** Kernel threads: mostly writeback of what the benchmark itself wrote. */
  kernel: number;
  /** CPU time the hypervisor took away. */
  steal: number;
}

/**
 * Starts measuring the CPU used by everything but this benchmark; the returned function gives
 * averages in cores (and stops the sampling). The benchmark's own time is its whole process tree's
 * (process-tree.ts), sampled every TREE_POLL_MS: its sandboxed Blenders, killed and reaped outside the
 * tree, are its own too.
 */
export function otherLoadMeter(tree = new TreeMeter()): () => OtherLoad {
  const m0 = cpuTicks();
  tree.poll();
  const k0 = kernelThreadTicks();
  const t0 = performance.now();
  const timer = setInterval(() => tree.poll(), TREE_POLL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    tree.poll();
    const m = cpuTicks();
    const ms = performance.now() - t0;
    // Clamped: kernel workers that exit meanwhile take their time with them.
    const kernel = Math.max(0, (kernelThreadTicks() - k0) / ms);
    const others = Math.max(0, (m.busy - m0.busy - tree.ticks()) / ms - kernel);
    return { others, kernel, steal: (m.steal - m0.steal) / ms };
  };
}

/** Share of all cores busy over the next `ms`: a quick "is the machine quiet" check before timing. */
export async function cpuBusy(ms = 1000): Promise<number> {
  const a = cpuTicks();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = cpuTicks();
  return (b.busy - a.busy) / Math.max(1, b.total - a.total);
}

/** Text for the results: how quiet the machine was before and during a run. */
export function loadNote(before: number, during: OtherLoad): string {
  const warn = during.others + during.steal > 0.2 ? ' (**not quiet: rerun for trustworthy numbers**)' : '';
  return (
    `- Other load: ${(before * 100).toFixed(0)}% of all cores busy in the second before the run; during it, on ` +
    `average, other programs used ${during.others.toFixed(2)} cores, kernel threads (writeback) ` +
    `${during.kernel.toFixed(2)}, hypervisor steal ${during.steal.toFixed(2)}${warn}`
  );
}

/** cpuBusy() with a warning when something else is already using the machine. */
export async function quietCheck(): Promise<number> {
  const busy = await cpuBusy();
  if (busy > 0.2)
    console.warn(`warning: ${(busy * 100).toFixed(0)}% of the CPU is busy before starting; numbers will be skewed`);
  return busy;
}
