// The BullMQ task queue's step before each claim, as a Lua script (keys as in lua.ts and
// lua-common.ts): housekeeping the claim relies on, and taking the claim's task from the order.
import { COMMON } from './lua-common.js';

/** Due hand-backs one preclaim moves per kind: a claim stays O(small); more due at once, BullMQ fetches the rest. */
const DUE_MOVES = 16;

/**
 * Run before each claim; every step is O(log n) plus the few items it handles. ARGV[3]: grace (ms)
 * before a hand-over is retried; ARGV[4..]: the kinds asked for. Returns {kinds to sweep, tasks to
 * hand to BullMQ again, per kind the enqueue order of its next task in BullMQ or -1, the task this
 * claim takes from the order ({} when none): {bid, kind, jobId, payload}}.
 *  - Hand-backs whose delay ran out (a release's, a retry's back-off, a wait's safety delay), at
 *    most DUE_MOVES per kind: out of BullMQ's delayed set into the claim order (backInOrder), where
 *    the SQL queues claim them once run_after passes; left there, BullMQ handed them out first.
 *  - The claim's task: the first in the claim order of the kinds asked for, handed to BullMQ by
 *    the caller, then fetched (recorded in promote first, so a crash in between is made up); none
 *    while BullMQ holds a ready task of those kinds, which the claim fetches instead.
 *  - Leases that ran out: a task BullMQ finished is settled here (its settling call was lost);
 *    an abandoned one is put in BullMQ's stalled set for BullMQ's stalled sweep to re-queue.
 *  - Hand-overs to BullMQ: an entry older than the grace is done (BullMQ has the job: the entry
 *    goes) or was cut short by a crash or outage (the task is returned to hand over again).
 */
export const PRECLAIM = `${COMMON}
local now = nowMs()
local DUE_MOVES = ${DUE_MOVES}
local sweep, seen, adds, order = {}, {}, {}, {}
-- Whether BullMQ holds a ready task of a kind asked for that is no claim's hand-over in flight (a
-- lease that ran out, a due hand-back dueInOrder left): this claim fetches that one, and a task
-- taken from the order too would stay in BullMQ's wait list; every later claim would fetch it and
-- leave its own, one task out of the order ahead of the rest for good (a woken task waited a slot
-- more). Hand-overs in flight (in promote) do not count: their claimers fetch them.
local held = false
-- Due hand-backs of kind k into the claim order. Skipped, and left for BullMQ's fetch: a task whose
-- hand-back is not recorded yet (still running: REQUEUED must see it so), canceled or gone, and one
-- the order or a hand-over has already (a resumed job's task): moved, it would be there twice.
local function dueInOrder(k)
  local dk = Q .. k .. ':delayed'
  for _, bid in ipairs(redis.call('ZRANGEBYSCORE', dk, '-inf', (now + 1) * 4096 - 1, 'LIMIT', 0, DUE_MOVES)) do
    local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'pr', 's')
    if (f[1] == 'queued' or f[1] == 'paused') and not redis.call('ZSCORE', B .. 'promote', bid)
      and not redis.call('ZSCORE', rqKey(k, f[2] or '0'), member(bid, f[3])) then
      backInOrder(bid, k)
    end
  end
end
for _, bid in ipairs(redis.call('ZRANGEBYSCORE', B .. 'lease', '-inf', now, 'LIMIT', 0, 50)) do
  local k = redis.call('HGET', B .. 't:' .. bid, 'k')
  if not k then
    redis.call('ZREM', B .. 'lease', bid)
  else
    local q = Q .. k .. ':'
    local pttl = redis.call('PTTL', q .. bid .. ':lock')
    -- PTTL is 0 for a lock with under a millisecond left, which still exists: BullMQ's sweep, a
    -- round trip later, could find it and pass the job over, and with the lease entry gone and the
    -- sweep rate-limited for its interval (30 s), nothing re-queued the task for that long.
    if pttl >= 0 then
      redis.call('ZADD', B .. 'lease', now + pttl + 1, bid)
    elseif redis.call('ZSCORE', q .. 'completed', bid) then
      settleDone(bid, now, {})
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
  dueInOrder(ARGV[i])
  local q = Q .. ARGV[i] .. ':'
  local best = -1
  local tail = redis.call('LINDEX', q .. 'wait', -1)
  if tail then best = tonumber(redis.call('HGET', B .. 't:' .. tail, 's')) or 0 end
  local d = redis.call('ZRANGE', q .. 'delayed', 0, 0, 'WITHSCORES')
  if d[1] and tonumber(d[2]) < (now + 1) * 4096 then
    local s = tonumber(redis.call('HGET', B .. 't:' .. d[1], 's')) or 0
    if best < 0 or s < best then best = s end
    held = true
  end
  if not held and tail then
    for _, w in ipairs(redis.call('LRANGE', q .. 'wait', -32, -1)) do
      if not redis.call('ZSCORE', B .. 'promote', w) then
        held = true
        break
      end
    end
  end
  table.insert(order, best)
end
local pick
for i = 4, #ARGV do
  local k = ARGV[i]
  local pk = B .. 'prios:' .. k
  local ps = redis.call('ZRANGE', pk, 0, 0)
  while ps[1] do
    local key = rqKey(k, ps[1])
    local h = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if h[1] then
      local c = {k = k, key = key, m = h[1], pr = tonumber(ps[1]), tag = tonumber(h[2])}
      -- Higher priority, then lower tag, then earlier enqueue (the member starts with it).
      if not pick or c.pr > pick.pr then
        pick = c
      elseif c.pr == pick.pr and (c.tag < pick.tag or (c.tag == pick.tag and c.m < pick.m)) then
        pick = c
      end
      break
    end
    redis.call('ZREM', pk, ps[1])
    ps = redis.call('ZRANGE', pk, 0, 0)
  end
end
local took = {}
if pick and not held then
  redis.call('ZREM', pick.key, pick.m)
  redis.call('HINCRBY', B .. 'rqn', pick.k, -1)
  local bid = string.sub(pick.m, 15)
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'j', 'pl', 'g')
  redis.call('SREM', B .. 'gq:' .. (f[3] or ''), bid)
  redis.call('HSET', t, 'p', f[2] or '{}')
  redis.call('ZADD', B .. 'promote', now, bid)
  took = {bid, pick.k, f[1], f[2] or '{}'}
end
return {sweep, adds, order, took}
`;
