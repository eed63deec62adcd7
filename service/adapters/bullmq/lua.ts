// The adapter's own bookkeeping next to BullMQ, as Lua scripts so that each step is atomic in
// Redis. Every script gets ARGV[1] = own key start (`<prefix>:tq:`) and ARGV[2] = BullMQ key start
// (`<prefix>:`); task keys use the BullMQ job id (`bid`). Per task, hash `t:<bid>` holds
// id (the task's own id), j (job id), k (kind), s (enqueue order), a (attempts), st (held | queued
// | running | done | failed | canceled), w (lease holder), e (last error), p (payload until BullMQ
// has the task). Sets: `job:<jobId>` (zset by s), `deps:<bid>` (unfinished tasks it waits for),
// `rdeps:<bid>` (tasks waiting for it), `held`, `promote` (zset by time: tasks handed to BullMQ,
// until claimed or checked), `lease` (zset: running tasks by lease end, on Redis's clock),
// `fin` (zset: finished tasks by when they finished, for pruning).
// The scripts build key names themselves, so the queue needs one Redis server (not a Cluster).

import { HELD_KINDS } from './lua-load.js';
import { JOB_RUNS } from './lua-task-runs.js';

const COMMON = `
local B = ARGV[1]
local Q = ARGV[2]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function isOpen(st) return st == 'queued' or st == 'running' or st == 'held' end
-- Done, and every task that waited only for it becomes queued (returned for the caller to add).
local function settleDone(bid, now, out)
  local t = B .. 't:' .. bid
  redis.call('ZREM', B .. 'lease', bid)
  if not isOpen(redis.call('HGET', t, 'st')) then return end
  redis.call('HSET', t, 'st', 'done')
  redis.call('HDEL', t, 'e', 'w')
  redis.call('ZADD', B .. 'fin', now, bid)
  local rk = B .. 'rdeps:' .. bid
  for _, h in ipairs(redis.call('SMEMBERS', rk)) do
    local dk = B .. 'deps:' .. h
    redis.call('SREM', dk, bid)
    local ht = B .. 't:' .. h
    if redis.call('SCARD', dk) == 0 and redis.call('HGET', ht, 'st') == 'held' then
      redis.call('HSET', ht, 'st', 'queued')
      redis.call('SREM', B .. 'held', h)
      redis.call('ZADD', B .. 'promote', now, h)
      local f = redis.call('HMGET', ht, 'k', 'j', 'p')
      table.insert(out, {h, f[1], f[2], f[3] or '{}'})
    end
  end
  redis.call('DEL', rk)
end
local function settleFailed(bid, msg)
  local t = B .. 't:' .. bid
  redis.call('ZREM', B .. 'lease', bid)
  if not isOpen(redis.call('HGET', t, 'st')) then return end
  redis.call('HSET', t, 'st', 'failed', 'e', msg)
  redis.call('HDEL', t, 'w')
  redis.call('ZADD', B .. 'fin', nowMs(), bid)
end
`;

/**
 * ARGV[3..]: bid, id, jobId, kind, payload JSON, then the bids it waits for.
 * Returns {0} when the id exists, {1} when held for dependencies, {2, kind, jobId, payload} when the
 * caller must hand it to BullMQ (also for an existing task whose hand-over may not have happened).
 */
const ENQUEUE = `${COMMON}
local bid = ARGV[3]
local t = B .. 't:' .. bid
if redis.call('EXISTS', t) == 1 then
  if redis.call('ZSCORE', B .. 'promote', bid) and redis.call('HGET', t, 'st') == 'queued' then
    local f = redis.call('HMGET', t, 'k', 'j', 'p')
    if f[3] then return {2, f[1], f[2], f[3]} end
  end
  return {0}
end
local seq = redis.call('INCR', B .. 'seq')
-- pl: the payload kept for reading (job-tasks); p goes once BullMQ has the task.
redis.call('HSET', t, 'id', ARGV[4], 'j', ARGV[5], 'k', ARGV[6], 's', seq, 'a', 0, 'p', ARGV[7], 'pl', ARGV[7])
redis.call('ZADD', B .. 'job:' .. ARGV[5], seq, bid)
local pending = 0
for i = 8, #ARGV do
  local d = ARGV[i]
  local st = redis.call('HGET', B .. 't:' .. d, 'st')
  -- As in the SQL queues, a task that does not exist holds nothing back.
  if st and st ~= 'done' then
    redis.call('SADD', B .. 'deps:' .. bid, d)
    redis.call('SADD', B .. 'rdeps:' .. d, bid)
    pending = pending + 1
  end
end
if pending > 0 then
  redis.call('HSET', t, 'st', 'held')
  redis.call('SADD', B .. 'held', bid)
  return {1}
end
redis.call('HSET', t, 'st', 'queued')
redis.call('ZADD', B .. 'promote', nowMs(), bid)
return {2, ARGV[6], ARGV[5], ARGV[7]}
`;

/**
 * Run before each claim; every step is O(log n) plus the few items it handles. ARGV[3]: grace (ms)
 * before a hand-over is retried; ARGV[4..]: the kinds asked for. Returns {kinds to sweep, tasks to
 * hand to BullMQ, per kind the enqueue order of its next ready task or -1}.
 *  - Leases that ran out: a task BullMQ finished is settled here (its settling call was lost);
 *    an abandoned one is put in BullMQ's stalled set for BullMQ's stalled sweep to re-queue.
 *  - Hand-overs to BullMQ: an entry older than the grace is done (BullMQ has the job: the entry
 *    goes) or was cut short by a crash or outage (the task is returned to hand over again).
 */
const PRECLAIM = `${COMMON}
local now = nowMs()
local sweep, seen, adds, order = {}, {}, {}, {}
for _, bid in ipairs(redis.call('ZRANGEBYSCORE', B .. 'lease', '-inf', now, 'LIMIT', 0, 50)) do
  local k = redis.call('HGET', B .. 't:' .. bid, 'k')
  if not k then
    redis.call('ZREM', B .. 'lease', bid)
  else
    local q = Q .. k .. ':'
    local pttl = redis.call('PTTL', q .. bid .. ':lock')
    if pttl > 0 then
      redis.call('ZADD', B .. 'lease', now + pttl, bid)
    elseif redis.call('ZSCORE', q .. 'completed', bid) then
      settleDone(bid, now, adds)
    elseif redis.call('ZSCORE', q .. 'failed', bid) then
      settleFailed(bid, redis.call('HGET', q .. bid, 'failedReason') or 'failed')
    else
      redis.call('ZREM', B .. 'lease', bid)
      redis.call('SADD', q .. 'stalled', bid)
      redis.call('DEL', q .. 'stalled-check')
      if not seen[k] then seen[k] = true; table.insert(sweep, k) end
    end
  end
end
for _, bid in ipairs(redis.call('ZRANGEBYSCORE', B .. 'promote', '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, 20)) do
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'st', 'k', 'j', 'p')
  if f[1] == 'queued' and f[4] and redis.call('EXISTS', Q .. f[2] .. ':' .. bid) == 0 then
    redis.call('ZADD', B .. 'promote', now, bid)
    table.insert(adds, {bid, f[2], f[3], f[4]})
  else
    redis.call('ZREM', B .. 'promote', bid)
    redis.call('HDEL', t, 'p')
  end
end
for i = 4, #ARGV do
  local q = Q .. ARGV[i] .. ':'
  local best = -1
  local tail = redis.call('LINDEX', q .. 'wait', -1)
  if tail then best = tonumber(redis.call('HGET', B .. 't:' .. tail, 's')) or 0 end
  local d = redis.call('ZRANGE', q .. 'delayed', 0, 0, 'WITHSCORES')
  if d[1] and tonumber(d[2]) < (now + 1) * 4096 then
    local s = tonumber(redis.call('HGET', B .. 't:' .. d[1], 's')) or 0
    if best < 0 or s < best then best = s end
  end
  table.insert(order, best)
end
return {sweep, adds, order}
`;

/**
 * ARGV[3..6]: bid, kind, workerId, leaseMs. BullMQ just made the task active under the worker's
 * lock: the lock is set to the lease and the attempt counted. Returns {attempts, id, jobId}, {0}
 * for a task that must not run (canceled, finished, unknown), {-1} when the lock is not the
 * worker's any more.
 */
const CLAIMED = `${COMMON}
local bid, wid, lease = ARGV[3], ARGV[5], tonumber(ARGV[6])
local t = B .. 't:' .. bid
local st = redis.call('HGET', t, 'st')
if st ~= 'queued' and st ~= 'running' then return {0} end
local lock = Q .. ARGV[4] .. ':' .. bid .. ':lock'
if redis.call('GET', lock) ~= wid then return {-1} end
redis.call('SET', lock, wid, 'PX', lease)
local a = redis.call('HINCRBY', t, 'a', 1)
local now = nowMs()
-- sa, rw: when the latest attempt started and who ran it, kept once the task ends (job-tasks).
redis.call('HSET', t, 'st', 'running', 'w', wid, 'sa', now, 'rw', wid)
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

/** ARGV[3]: bid. Settles a task BullMQ completed; returns the tasks that waited for it and are now free. */
const COMPLETED = `${COMMON}
local bid = ARGV[3]
local k = redis.call('HGET', B .. 't:' .. bid, 'k')
local out = {}
if k and redis.call('ZSCORE', Q .. k .. ':completed', bid) then settleDone(bid, nowMs(), out) end
return out
`;

/** ARGV[3..4]: bid, message. Settles a task BullMQ failed for good. */
const FAILED = `${COMMON}
local bid = ARGV[3]
local k = redis.call('HGET', B .. 't:' .. bid, 'k')
if k and redis.call('ZSCORE', Q .. k .. ':failed', bid) then settleFailed(bid, ARGV[4]) return 1 end
return 0
`;

/**
 * ARGV[3..6]: bid, workerId, 'release' | 'retry', message. After BullMQ moved the task back (to
 * delayed): queued again; a release does not count as an attempt, a retry records its error.
 */
const REQUEUED = `${COMMON}
local t = B .. 't:' .. ARGV[3]
local f = redis.call('HMGET', t, 'st', 'w')
if f[1] ~= 'running' or f[2] ~= ARGV[4] then return 0 end
redis.call('HSET', t, 'st', 'queued')
redis.call('HDEL', t, 'w')
redis.call('ZREM', B .. 'lease', ARGV[3])
if ARGV[5] == 'release' then redis.call('HINCRBY', t, 'a', -1) else redis.call('HSET', t, 'e', ARGV[6]) end
return 1
`;

/** ARGV[3]: jobId. Marks the job's unfinished tasks canceled; returns {bid, kind, previous state, holder}. */
const CANCEL = `${COMMON}
local out = {}
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'st', 'k', 'w')
  if isOpen(f[1]) then
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
    redis.call('DEL', t, B .. 'deps:' .. bid, B .. 'rdeps:' .. bid)
    local jk = B .. 'job:' .. f[1]
    redis.call('ZREM', jk, bid)
    if redis.call('ZCARD', jk) == 0 then redis.call('DEL', jk, B .. 'fail:' .. f[1]) end
    table.insert(out, {bid, f[2]})
  end
end
return out
`;

export const SCRIPTS = {
  rbtqEnqueue: ENQUEUE,
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
} as const;

export type ScriptName = keyof typeof SCRIPTS;
