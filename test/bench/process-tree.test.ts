// The bench's load meter counts its whole process tree (bench/lib/process-tree.ts): a descendant
// reaped inside the tree once (through its parent's reaped time), one killed and reaped outside it
// (a sandboxed Blender under bwrap) by what it used when last seen.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStat, TreeMeter, type ProcStat } from '../../bench/lib/process-tree.js';

const p = (pid: number, ppid: number, own: number, reaped = 0): ProcStat => ({
  pid,
  ppid,
  start: `s${pid}`,
  own,
  reaped,
});

/** Polls `cond` until true or a generous deadline. */
async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!cond() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A meter over scripted /proc snapshots, polled once per snapshot. */
function run(snapshots: ProcStat[][], root = 10): number {
  let i = 0;
  const meter = new TreeMeter(() => snapshots[i]!, root);
  for (; i < snapshots.length; i++) meter.poll();
  return meter.ticks();
}

describe('TreeMeter', () => {
  it('counts a child reaped by the root once, through the root', () => {
    const ms = run([[p(10, 1, 100)], [p(10, 1, 120), p(11, 10, 500)], [p(10, 1, 130, 800)]]);
    // Root: 30 own + 800 reaped (the child's whole 800, of which 500 was seen): not 800 + 500.
    expect(ms).toBe(830);
  });

  it('counts a sandboxed Blender killed and reaped outside the tree by what it used when last seen', () => {
    // 10 the bench, 11 the service, 12 bwrap, 13 bwrap's namespace init, 14 Blender.
    const tree = (blender: number) => [p(10, 1, 0), p(11, 10, 50), p(12, 11, 1), p(13, 12, 1), p(14, 13, blender)];
    // Killed: bwrap reaped by the service (tiny reaped time); init and Blender gone with nothing reaped for them.
    const ms = run([tree(0), tree(3000), tree(9000), [p(10, 1, 0), p(11, 10, 60, 1)]]);
    // The service's 10 since the first poll and 1 reaped, Blender's 9000; bwrap's were there before.
    expect(ms).toBe(11 + 9000);
  });

  it('counts a descendant adopted by init while alive, and not what it used before the meter started', () => {
    const ms = run([
      [p(10, 1, 0), p(11, 10, 0), p(12, 11, 400)],
      [p(10, 1, 0), p(12, 1, 700)],
      [p(10, 1, 0), p(12, 1, 1000)],
    ]);
    // 12 ran 400 before the first poll; its parent 11 ended unreaped (counted at its 0).
    expect(ms).toBe(600);
  });

  it('reads /proc/PID/stat with a command name holding spaces and parentheses', () => {
    const line = '4242 (a b) c)) S 17 4242 4242 0 -1 4194560 1 0 0 0 7 3 2 1 20 0 1 0 123456 0 0';
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 17, start: '123456', own: 100, reaped: 30 });
  });

  it('sees an orphaned grandchild that the old reaped-children count missed', async () => {
    if (process.platform !== 'linux') return void console.log('skipped: /proc is Linux-only');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tree-meter-'));
    const [done, pidFile, go] = ['done', 'pid', 'go'].map((f) => path.join(dir, f)) as [string, string, string];
    const meter = new TreeMeter();
    meter.poll();
    // The shell starts a CPU-bound child and waits for the word to exit: its child then runs on as an
    // orphan, reaped by init, never by this process.
    const loop = `i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; : > ${done}`;
    const script = `sh -c '${loop}' & echo $! > ${pidFile}; while [ ! -e ${go} ]; do sleep 0.05; done`;
    const shell = spawn('sh', ['-c', script], { stdio: 'ignore' });
    const exited = new Promise((resolve) => shell.once('exit', resolve));
    await until(() => existsSync(pidFile));
    meter.poll();
    writeFileSync(go, '');
    await exited;
    const deadline = Date.now() + 120_000;
    while (!existsSync(done) && Date.now() < deadline) {
      meter.poll();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    meter.poll();
    expect(existsSync(done)).toBe(true);
    // The loop takes about a second of CPU on these cores; a share of it was seen before it ended.
    expect(meter.ticks()).toBeGreaterThanOrEqual(200);
  });
});
