// The worker's memory cgroup read from recorded cgroup trees of both versions: v1's memory
// controller (this test machine's kind) and v2's unified hierarchy, with their limits and OOM-kill
// counters. Making a slot's group for real is test/e2e/out-of-memory.test.ts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSlotCgroup, memoryLimit, oomKills, ownMemoryCgroup } from '../../blender/memory-cgroup.js';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'rb-cgroup-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}

describe('memory cgroup', () => {
  it('v1: the memory controller line of /proc/self/cgroup, its limit and oom_kill count', () => {
    const root = tree({
      'proc-self-cgroup': '9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n',
      'fs/memory/process_api/abc/memory.limit_in_bytes': '9223372036854771712\n',
      'fs/memory/process_api/abc/memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
    });
    const g = ownMemoryCgroup({ procSelf: path.join(root, 'proc-self-cgroup'), mount: path.join(root, 'fs') });
    expect(g).toEqual({ version: 1, dir: path.join(root, 'fs/memory/process_api/abc') });
    // v1's "no limit" is a huge number: none.
    expect(memoryLimit(g!)).toBeUndefined();
    expect(oomKills(g!)).toBe(2);
    const slot = createSlotCgroup(g!, 'renderbridge-w-1-cpu-0', 500 * 2 ** 20);
    expect(memoryLimit(slot)).toBe(500 * 2 ** 20);
    expect(slot.procs).toBe(path.join(g!.dir, 'renderbridge-w-1-cpu-0', 'cgroup.procs'));
  });

  it('v2: the unified line, memory.max and memory.events', () => {
    const root = tree({
      'proc-self-cgroup': '0::/system.slice/renderbridge.service\n',
      'fs/system.slice/renderbridge.service/memory.max': '17179869184\n',
      'fs/system.slice/renderbridge.service/memory.events': 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n',
    });
    const g = ownMemoryCgroup({ procSelf: path.join(root, 'proc-self-cgroup'), mount: path.join(root, 'fs') });
    expect(g).toEqual({ version: 2, dir: path.join(root, 'fs/system.slice/renderbridge.service') });
    expect(memoryLimit(g!)).toBe(16 * 2 ** 30);
    expect(oomKills(g!)).toBe(1);
    writeFileSync(path.join(g!.dir, 'memory.max'), 'max\n');
    expect(memoryLimit(g!)).toBeUndefined();
  });

  it('no memory controller: none', () => {
    const root = tree({ 'proc-self-cgroup': '0::/\n' });
    expect(
      ownMemoryCgroup({ procSelf: path.join(root, 'proc-self-cgroup'), mount: path.join(root, 'fs') }),
    ).toBeUndefined();
    expect(ownMemoryCgroup({ procSelf: path.join(root, 'missing') })).toBeUndefined();
  });
});
