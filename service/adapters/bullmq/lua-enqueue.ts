// The BullMQ task queue's enqueue (keys as in lua.ts and lua-common.ts): one task per call, or a
// batch in one call (TaskSubmitter.enqueueMany) that runs the same steps for each task in order, so
// its claim order, tags and dependencies are those of one enqueue after another, and no claim or
// other script runs between two of its tasks.
import { COMMON } from './lua-common.js';

/**
 * A new task: bid, id, jobId, kind, payload JSON, priority ('' when not named), 'g:' .. group (''
 * when not named), frames, the bids it waits for. The job's first named priority and group stay the
 * job's (js:<jobId>). Returns {0} when the id exists, {1} when held (dependencies, or its job is
 * paused), {3} when queued, {2, kind, jobId, payload} when the caller must hand an existing task to
 * BullMQ (a claim's hand-over that may not have happened).
 */
const ENQUEUE_ONE = `
local function enqueueOne(bid, id, jobId, kind, payload, prio, group, frames, after)
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
  redis.call('HSET', t, 'id', id, 'j', jobId, 'k', kind, 's', seq, 'a', 0, 'p', payload, 'pl', payload)
  redis.call('ZADD', B .. 'job:' .. jobId, seq, bid)
  local js = B .. 'js:' .. jobId
  if prio ~= '' then redis.call('HSETNX', js, 'pr', prio) end
  if group ~= '' then redis.call('HSETNX', js, 'g', string.sub(group, 3)) end
  local sched = redis.call('HMGET', js, 'pr', 'g')
  local g = sched[2] or ''
  local units = tonumber(frames) or 0
  redis.call('HSET', t, 'pr', sched[1] or '0', 'g', g, 'u', units, 'tg', tagTask(kind, g, units))
  local pending = 0
  for _, d in ipairs(after) do
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
  if pushReady(bid) then return {3} end
  return {1}
end
`;

/** ARGV[3..]: one task as enqueueOne takes it, the bids it waits for last. Returns enqueueOne's reply. */
export const ENQUEUE = `${COMMON}${ENQUEUE_ONE}
local after = {}
for i = 11, #ARGV do table.insert(after, ARGV[i]) end
return enqueueOne(ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], after)
`;

/**
 * ARGV[3..]: tasks one after another, each as ENQUEUE takes it but with how many bids it waits for
 * before them (bid, id, jobId, kind, payload, priority, group, frames, n, n bids). Returns one
 * enqueueOne reply per task, in order.
 */
export const ENQUEUE_MANY = `${COMMON}${ENQUEUE_ONE}
local out, i = {}, 3
while i <= #ARGV do
  local n = tonumber(ARGV[i + 8])
  local after = {}
  for k = 1, n do after[k] = ARGV[i + 8 + k] end
  table.insert(out, enqueueOne(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5],
    ARGV[i + 6], ARGV[i + 7], after))
  i = i + 9 + n
end
return out
`;
