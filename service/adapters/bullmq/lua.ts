// The adapter's own bookkeeping next to BullMQ, as Lua scripts so that each step is atomic in
// Redis. Every script gets ARGV[1] = own key start (`<prefix>:tq:`) and ARGV[2] = BullMQ key start
// (`<prefix>:`); task keys use the BullMQ job id (`bid`). Per task, hash `t:<bid>` holds
// id (the task's own id), j (job id), k (kind), s (enqueue order), a (attempts), st (held | queued
// | running | done | failed | canceled), w (lease holder), e (last error), p (payload until BullMQ
// has the task). Sets: `job:<jobId>` (zset by s), `deps:<bid>` (unfinished tasks it waits for),
// `rdeps:<bid>` (tasks waiting for it), `held`, `promote` (zset by time: tasks handed to BullMQ,
// until claimed or checked), `lease` (zset: running tasks by lease end, on Redis's clock),
// `fin` (zset: finished tasks by when they finished, for pruning).
// The claim order, pause and fair share keep more keys: see lua-common.ts; dependency waits: lua-waits.ts;
// enqueue, one task or a batch: lua-enqueue.ts.
// The scripts build key names themselves, so the queue needs one Redis server (not a Cluster).

import { COMMON } from './lua-common.js';
import { ENQUEUE, ENQUEUE_MANY } from './lua-enqueue.js';
import { HELD_KINDS } from './lua-load.js';
import { JOB_RUNS } from './lua-task-runs.js';
import { PRECLAIM } from './lua-preclaim.js';
import { SCHEDULE_SCRIPTS } from './lua-schedule.js';
import { WEIGHT_SCRIPTS } from './lua-weights.js';
import { PRUNE_WAITS, WAIT_SCRIPTS } from './lua-waits.js';

/**
 * ARGV[3..7]: bid, kind, workerId, leaseMs, now on the adapter's clock (ms). BullMQ just made the
 * task active under the worker's lock: the lock is set to the lease and the attempt counted.
 * Returns {attempts, id, jobId}, {0} for a task that must not run (canceled, finished, unknown, or
 * its job paused: then it is held until the resume), {-1} when the lock is not the worker's any more.
 */
const CLAIMED = `${COMMON}
local bid, wid, lease = ARGV[3], ARGV[5], tonumber(ARGV[6])
local t = B .. 't:' .. bid
local st = redis.call('HGET', t, 'st')
if st ~= 'queued' and st ~= 'running' then return {0} end
local lock = Q .. ARGV[4] .. ':' .. bid .. ':lock'
if redis.call('GET', lock) ~= wid then return {-1} end
-- Out of the order: it may be there too (resumed while BullMQ still had it).
unqueue(bid)
local jg = redis.call('HMGET', t, 'j', 'g')
if redis.call('HGET', B .. 'js:' .. jg[1], 'pz') == '1' then
  redis.call('HSET', t, 'st', 'paused')
  redis.call('HDEL', t, 'w')
  redis.call('SADD', B .. 'paused', bid)
  redis.call('SADD', B .. 'gq:' .. (jg[2] or ''), bid)
  redis.call('ZREM', B .. 'lease', bid)
  return {0}
end
redis.call('SREM', B .. 'gq:' .. (jg[2] or ''), bid)
redis.call('SET', lock, wid, 'PX', lease)
local a = redis.call('HINCRBY', t, 'a', 1)
local now = nowMs()
-- sa, rw: when the latest attempt started and who ran it, kept once the task ends (job-tasks).
redis.call('HSET', t, 'st', 'running', 'w', wid, 'sa', now, 'rw', wid, 'cs', ARGV[7])
redis.call('ZADD', B .. 'lease', now + lease, bid)
redis.call('ZREM', B .. 'promote', bid)
redis.call('HDEL', t, 'p')
local f = redis.call('HMGET', t, 'id', 'j')
return {a, f[1], f[2]}
`;

/** ARGV[3..5]: bid, workerId, leaseMs; after BullMQ extended the lock. 1 when the lease is the worker's. */
const EXTENDED = `${COMMON}
local t = B .. 't:' .. ARGV[3]
local f = redis.call('HMGET', t, 'st', 'w')
if f[1] ~= 'running' or f[2] ~= ARGV[4] then return 0 end
redis.call('ZADD', B .. 'lease', nowMs() + tonumber(ARGV[5]), ARGV[3])
return 1
`;

/**
 * ARGV[3..4]: bid, now on the adapter's clock. Settles a task BullMQ completed, charging its slot
 * time to its group; returns {bid, kind} of the tasks that waited for it and are now queued.
 */
const COMPLETED = `${COMMON}
local bid = ARGV[3]
local k = redis.call('HGET', B .. 't:' .. bid, 'k')
local out = {}
if k and redis.call('ZSCORE', Q .. k .. ':completed', bid) then
  if redis.call('HGET', B .. 't:' .. bid, 'st') == 'running' then charge(bid, tonumber(ARGV[4])) end
  settleDone(bid, nowMs(), out)
end
return out
`;

/** ARGV[3..5]: bid, message, now on the adapter's clock. Settles a task BullMQ failed for good. */
const FAILED = `${COMMON}
local bid = ARGV[3]
local k = redis.call('HGET', B .. 't:' .. bid, 'k')
if k and redis.call('ZSCORE', Q .. k .. ':failed', bid) then
  if redis.call('HGET', B .. 't:' .. bid, 'st') == 'running' then charge(bid, tonumber(ARGV[5])) end
  settleFailed(bid, ARGV[4])
  return 1
end
return 0
`;

/**
 * ARGV[3..8]: bid, workerId, 'release' | 'retry', message, now on the adapter's clock, '1' when due
 * now. After BullMQ moved the task back (to delayed): queued again, or held while its job is paused
 * (the claim that fetches it from BullMQ then drops it); a release does not count as an attempt, a
 * retry records its error and its slot time. Due now, it goes back into the claim order at its place.
 */
const REQUEUED = `${COMMON}
local t = B .. 't:' .. ARGV[3]
local f = redis.call('HMGET', t, 'st', 'w', 'j', 'g', 'k')
if f[1] ~= 'running' or f[2] ~= ARGV[4] then return 0 end
if ARGV[5] == 'retry' then charge(ARGV[3], tonumber(ARGV[7])) end
if redis.call('HGET', B .. 'js:' .. f[3], 'pz') == '1' then
  redis.call('HSET', t, 'st', 'paused')
  redis.call('SADD', B .. 'paused', ARGV[3])
  redis.call('SADD', B .. 'gq:' .. (f[4] or ''), ARGV[3])
else
  redis.call('HSET', t, 'st', 'queued')
end
redis.call('HDEL', t, 'w')
redis.call('ZREM', B .. 'lease', ARGV[3])
if ARGV[5] == 'release' then redis.call('HINCRBY', t, 'a', -1) else redis.call('HSET', t, 'e', ARGV[6]) end
if ARGV[8] == '1' then backInOrder(ARGV[3], f[5]) end
return 1
`;

/** ARGV[3]: jobId. Marks the job's unfinished tasks canceled; returns {bid, kind, previous state, holder}. */
const CANCEL = `${COMMON}
local out = {}
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'st', 'k', 'w', 'g')
  if isOpen(f[1]) then
    unqueue(bid)
    redis.call('SREM', B .. 'paused', bid)
    redis.call('SREM', B .. 'gq:' .. (f[4] or ''), bid)
    -- A canceled backlog does not keep pushing the group's next tasks behind everyone.
    local gk = B .. 'sg:' .. (f[4] or '')
    if redis.call('SCARD', B .. 'gq:' .. (f[4] or '')) == 0 then
      local v = vtime(f[2])
      if (tonumber(redis.call('HGET', gk, 'lt')) or 0) > v then redis.call('HSET', gk, 'lt', v) end
    end
    redis.call('HSET', t, 'st', 'canceled')
    redis.call('HDEL', t, 'w', 'p')
    redis.call('ZADD', B .. 'fin', nowMs(), bid)
    redis.call('ZREM', B .. 'lease', bid)
    redis.call('ZREM', B .. 'promote', bid)
    redis.call('SREM', B .. 'held', bid)
    table.insert(out, {bid, f[2], f[1], f[3] or ''})
  end
end
return out
`;

/** ARGV[3]: jobId. The job's tasks, oldest first: {id, kind, state, attempts, last error or nil}. */
const JOB_TASKS = `${COMMON}
local out = {}
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local f = redis.call('HMGET', B .. 't:' .. bid, 'id', 'k', 'st', 'a', 'e')
  if f[1] then table.insert(out, {f[1], f[2], f[3], f[4], f[5] or false}) end
end
return out
`;

/**
 * ARGV[3]: finished before (ms since epoch), ARGV[4]: at most this many. Deletes those tasks'
 * keys (and a job's index and failure counts once it has no task left); returns {bid, kind} of
 * each, for the caller to remove the BullMQ job too.
 */
const PRUNE = `${COMMON}
local out = {}
for _, bid in ipairs(redis.call('ZRANGEBYSCORE', B .. 'fin', '-inf', '(' .. ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))) do
  redis.call('ZREM', B .. 'fin', bid)
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'j', 'k', 'st')
  if f[3] and not isOpen(f[3]) then
    ${PRUNE_WAITS}
    redis.call('DEL', t, B .. 'deps:' .. bid, B .. 'rdeps:' .. bid)
    local jk = B .. 'job:' .. f[1]
    redis.call('ZREM', jk, bid)
    if redis.call('ZCARD', jk) == 0 then redis.call('DEL', jk, B .. 'fail:' .. f[1], B .. 'js:' .. f[1]) end
    table.insert(out, {bid, f[2]})
  end
end
-- Ends recorded before then: no release can still be reading such a job as unfinished.
redis.call('ZREMRANGEBYSCORE', B .. 'ended', '-inf', '(' .. ARGV[3])
return out
`;

export const SCRIPTS = {
  rbtqEnqueue: ENQUEUE,
  rbtqEnqueueMany: ENQUEUE_MANY,
  rbtqPreclaim: PRECLAIM,
  rbtqClaimed: CLAIMED,
  rbtqExtended: EXTENDED,
  rbtqCompleted: COMPLETED,
  rbtqFailed: FAILED,
  rbtqRequeued: REQUEUED,
  rbtqCancel: CANCEL,
  rbtqJobTasks: JOB_TASKS,
  rbtqPrune: PRUNE,
  rbtqJobRuns: JOB_RUNS,
  rbtqHeldKinds: HELD_KINDS,
  ...SCHEDULE_SCRIPTS,
  ...WEIGHT_SCRIPTS,
  ...WAIT_SCRIPTS,
} as const;

export type ScriptName = keyof typeof SCRIPTS;
