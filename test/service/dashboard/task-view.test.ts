// How a task and a session read to a person, from the stored facts: duration of a finished and
// a running attempt, the exit reason in words, and when a session has ended (pure rules).
import { describe, expect, it } from 'vitest';
import {
  csrfMatches,
  csrfTokenFor,
  hashSessionId,
  newSessionId,
  sessionEnded,
  sessionEndsAt,
} from '../../../service/domain/sessions.js';
import { framesOf, presentTask } from '../../../service/domain/task-runs.js';
import type { TaskRun } from '../../../service/ports/tasks.js';

const base: TaskRun = {
  id: 't',
  kind: 'render-chunk',
  state: 'queued',
  attempts: 0,
  lastError: null,
  frames: [1, 2],
  worker: null,
  startedAt: null,
  finishedAt: null,
};

describe('a task as the job page shows it', () => {
  it('times the latest attempt, up to now while it runs, and says how it ended or why it is retried', () => {
    const now = Date.parse('2026-01-01T00:01:00Z');
    expect(presentTask(base, now)).toMatchObject({ attempt: 0, durationSeconds: null, exitReason: null });
    const running = {
      ...base,
      state: 'running' as const,
      attempts: 2,
      worker: 'host:gpu0',
      startedAt: '2026-01-01T00:00:30Z',
      lastError: 'Blender crashed',
    };
    expect(presentTask(running, now)).toMatchObject({
      durationSeconds: 30,
      exitReason: 'retrying after: Blender crashed',
      worker: 'host:gpu0',
    });
    const done = { ...running, state: 'done' as const, finishedAt: '2026-01-01T00:00:42.34Z', lastError: null };
    expect(presentTask(done, now)).toMatchObject({ durationSeconds: 12.3, exitReason: 'done' });
    expect(presentTask({ ...done, state: 'failed', lastError: 'Error: out of memory' }, now).exitReason).toBe(
      'Error: out of memory',
    );
    expect(presentTask({ ...done, state: 'canceled' }, now).exitReason).toBe('canceled');
  });

  it('reads frames from a chunk payload only', () => {
    expect(framesOf('{"index":0,"frames":[3,4]}')).toEqual([3, 4]);
    expect(framesOf({ frames: [5] })).toEqual([5]);
    expect(framesOf('{}')).toBeNull();
    expect(framesOf('{"frames":["1"]}')).toBeNull();
    expect(framesOf('not json')).toBeNull();
    expect(framesOf(null)).toBeNull();
  });
});

describe('session rules', () => {
  const life = { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 };
  const s = {
    idHash: Buffer.alloc(32),
    keyId: 'k',
    workspaceId: 'w',
    userId: 'u',
    workspaceName: 'studio',
    createdAt: 0,
    lastSeenAt: 1000,
    expiresAt: 100_000_000,
    keyRevoked: false,
  };

  it('ends a session when idle, past its absolute end, or with its key revoked, in that order of precedence', () => {
    expect(sessionEnded(s, 1000 + life.idleMs - 1, life)).toBeUndefined();
    expect(sessionEnded(s, 1000 + life.idleMs, life)).toBe('idle');
    expect(sessionEnded({ ...s, lastSeenAt: 99_999_999 }, 100_000_000, life)).toBe('expired');
    expect(sessionEnded({ ...s, keyRevoked: true }, 2000, life)).toBe('revoked');
    expect(sessionEndsAt(s, life)).toBe(1000 + life.idleMs);
    expect(sessionEndsAt({ ...s, lastSeenAt: 99_000_000 }, life)).toBe(100_000_000);
  });

  it('derives a CSRF token per session that reveals neither the id nor its stored hash', () => {
    const a = newSessionId();
    const b = newSessionId();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrfTokenFor(a)).not.toBe(csrfTokenFor(b));
    expect(csrfTokenFor(a)).not.toContain(a);
    expect(csrfTokenFor(a)).not.toBe(hashSessionId(a).toString('base64url'));
    expect(csrfMatches(a, csrfTokenFor(a))).toBe(true);
    expect(csrfMatches(a, csrfTokenFor(b))).toBe(false);
    expect(csrfMatches(a, undefined)).toBe(false);
    expect(csrfMatches(a, '')).toBe(false);
  });
});
