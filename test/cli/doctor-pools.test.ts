// `renderbridge doctor` on this machine's pools: the memory its render slots get, whether
// --slot-memory can be held by a memory cgroup here, and the worker's tags as the worker reads them.
import { mkdtempSync } from 'node:fs';
import { totalmem, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryCheck, tagsCheck } from '../../cli/doctor/pool-checks.js';

describe('doctor: memory and tags', () => {
  it("says the slots' memory, and warns of a --slot-memory above what the machine has", () => {
    expect(memoryCheck(undefined, null)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^\d+\.\d GiB for render slots \(the RAM\); a GPU slot has its GPU's memory$/),
    });
    expect(memoryCheck(totalmem() * 2, null)).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/^Lower --slot-memory/),
    });
    expect(memoryCheck(2 ** 30, null)).toMatchObject({
      status: 'warn',
      detail: '--slot-memory 1.0 GiB per CPU slot, but no memory cgroup holds the slots to it',
    });
  });

  it('makes and removes a slot cgroup to tell whether --slot-memory is enforced', () => {
    // A folder standing for a v1 memory group: mkdir and the limit file work there as in cgroupfs.
    const dir = mkdtempSync(path.join(tmpdir(), 'rb-doctor-cg-'));
    expect(memoryCheck(2 ** 30, { version: 1, dir })).toMatchObject({
      status: 'ok',
      detail: '--slot-memory 1.0 GiB per CPU slot, each held to it by a memory cgroup',
    });
    expect(memoryCheck(2 ** 30, { version: 1, dir: '/proc/no-such-group' })).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/^Run the worker as root/),
    });
  });

  it('lists the tags, and fails on one the worker would refuse', () => {
    expect(tagsCheck(['gpu:a4000', 'site:paris'])).toEqual({
      name: 'tags',
      status: 'ok',
      detail: 'gpu:a4000, site:paris',
    });
    expect(tagsCheck(['site paris'])).toMatchObject({ status: 'fail', detail: expect.stringMatching(/"site paris"/) });
  });
});
