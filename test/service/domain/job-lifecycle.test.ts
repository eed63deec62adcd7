// The state machine is a gate: named moves checked against shared/job-status.ts, lists derived
// from the table, and no status write in the product code that goes around the moves.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ACTIVE_STATUSES,
  CANCELABLE_STATUSES,
  JOB_STATUSES,
  TERMINAL_STATUSES,
  TRANSITIONS,
} from '../../../shared/job-status.js';
import {
  assertMove,
  IllegalTransitionError,
  MOVES,
  moveJob,
  statesThatCanMoveTo,
} from '../../../service/domain/job-lifecycle.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('job lifecycle', () => {
  it('has only moves the table allows', () => {
    for (const [name, m] of Object.entries(MOVES)) {
      expect(m.from.length, name).toBeGreaterThan(0);
      for (const s of m.from) expect(TRANSITIONS[s], `${name}: ${s} -> ${m.to}`).toContain(m.to);
    }
  });

  it('refuses what the table forbids and names both states', () => {
    expect(() => assertMove('completed', 'rendering')).toThrow(IllegalTransitionError);
    expect(() => assertMove('created', 'booting')).toThrow('a job cannot move from "created" to "booting"');
    expect(() => assertMove('rendering', 'rendering')).not.toThrow();
  });

  it('derives "every unfinished state" and the other lists from the table', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(['canceled', 'completed', 'failed']);
    expect(new Set(statesThatCanMoveTo('canceled'))).toEqual(CANCELABLE_STATUSES);
    expect(new Set(MOVES.fail.from)).toEqual(new Set(JOB_STATUSES.filter((s) => !TERMINAL_STATUSES.has(s))));
    expect([...ACTIVE_STATUSES].sort()).toEqual([
      'booting',
      'debugging',
      'finalizing',
      'rendering',
      'suspended',
      'validating',
    ]);
  });

  it("hands the store exactly the move's states", async () => {
    const calls: unknown[][] = [];
    await moveJob({ transition: async (...a: unknown[]) => (calls.push(a), undefined) }, 'j1', 'startRender', {
      normalizedSeconds: 1,
    });
    expect(calls).toEqual([['j1', ['validated'], 'booting', { normalizedSeconds: 1 }, undefined]]);
  });

  it('is the only way the product code writes a job status', async () => {
    // Allowed: the gate itself, the stores that implement the write, and the worker API that
    // carries a remote worker's move to the store (it checks the table too).
    const allowed = new Set([
      'service/domain/job-lifecycle.ts',
      'service/adapters/sql/job-store.ts',
      'service/worker/remote-jobs.ts',
      'service/worker-api/routes.ts',
    ]);
    const offenders: string[] = [];
    for (const dir of ['service', 'shared', 'cli', 'daemon']) {
      for (const file of await tsFiles(path.join(root, dir))) {
        const rel = path.relative(root, file).split(path.sep).join('/');
        if (allowed.has(rel)) continue;
        const text = await readFile(file, 'utf8');
        if (/\.transition\(/.test(text)) offenders.push(rel);
      }
    }
    expect(offenders).toEqual([]);
  });
});

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await tsFiles(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}
