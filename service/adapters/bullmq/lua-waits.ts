// Tasks released waiting for other jobs to end, in the BullMQ task queue (ports/dependency-waits.ts),
// as Lua scripts so that a release's wait and a job's end never miss each other: Redis runs one
// script at a time. Keys (as in lua.ts): `dw:<jobId>` (set: bids waiting for the job),
// `dwt:<bid>` (set: the jobs the task waits for), `ended` (zset: jobs that ended, by when, Redis
// clock; pruned with the tasks). A released task sits in BullMQ's delayed set until its safety
// delay. Waking it takes it out of BullMQ and puts it back in the adapter's claim order
// (lua-common.ts) under the tag and enqueue order it was given at submit, the place the SQL
// queues claim a woken task from (they keep its tag and seq): left in BullMQ, it went to the back
// of BullMQ's wait list, behind every task a claim had handed over meanwhile (a whole backlog).

import { COMMON } from './lua-common.js';

/** The claim order (COMMON) and the waits' own helpers. */
const WAITS = `${COMMON}
-- Drops every wait of the task (it says again what it still waits for when it runs).
local function unwait(bid, except)
  for _, j in ipairs(redis.call('SMEMBERS', B .. 'dwt:' .. bid)) do
    if j ~= except then redis.call('SREM', B .. 'dw:' .. j, bid) end
  end
  redis.call('DEL', B .. 'dwt:' .. bid)
end
-- Into the claim order (backInOrder, lua-common.ts); true when queued. A task not in the delayed
-- set is left: its safety delay ran out and BullMQ's wait list has it, where a claim fetches it first.
local function wake(bid, k) return backInOrder(bid, k) or false end
`;

/**
 * ARGV[3..]: bid, kind, then the job ids it waits for; run after the release (REQUEUED). Returns 2
 * when one of them had ended already (the task was woken at once), 1 when the wait is stored, 0
 * when the task is not waiting in the queue (the release did not happen).
 */
const WAIT = `${WAITS}
local bid = ARGV[3]
local st = redis.call('HGET', B .. 't:' .. bid, 'st')
if st ~= 'queued' and st ~= 'paused' then return 0 end
unwait(bid, nil)
for i = 5, #ARGV do
  if redis.call('ZSCORE', B .. 'ended', ARGV[i]) then
    wake(bid, ARGV[4])
    return 2
  end
end
for i = 5, #ARGV do
  redis.call('SADD', B .. 'dw:' .. ARGV[i], bid)
  redis.call('SADD', B .. 'dwt:' .. bid, ARGV[i])
end
return 1
`;

/**
 * ARGV[3]: jobId, which ended. Records the end and wakes the tasks waiting for it; returns
 * the kinds of those now claimable (a paused job's stay held).
 */
const JOB_ENDED = `${WAITS}
local j = ARGV[3]
redis.call('ZADD', B .. 'ended', nowMs(), j)
local kinds, seen = {}, {}
for _, bid in ipairs(redis.call('SMEMBERS', B .. 'dw:' .. j)) do
  unwait(bid, j)
  local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'k')
  if f[1] == 'queued' or f[1] == 'paused' then
    if wake(bid, f[2]) and not seen[f[2]] then
      seen[f[2]] = true
      table.insert(kinds, f[2])
    end
  end
end
redis.call('DEL', B .. 'dw:' .. j)
return kinds
`;

/** Lua for PRUNE (lua.ts), per pruned task `bid`: its waits go. */
export const PRUNE_WAITS = `
for _, j in ipairs(redis.call('SMEMBERS', B .. 'dwt:' .. bid)) do redis.call('SREM', B .. 'dw:' .. j, bid) end
redis.call('DEL', B .. 'dwt:' .. bid)
`;

export const WAIT_SCRIPTS = {
  rbtqWait: WAIT,
  rbtqJobEnded: JOB_ENDED,
} as const;
