// A job's scheduling in the BullMQ task queue, as Lua scripts (keys as in lua.ts and lua-common.ts):
// its priority changed while it waits, pause and resume. Each walks the job's task index once.
import { COMMON } from './lua-common.js';

/**
 * ARGV[3..4]: jobId, priority. The job's open tasks and its later ones take the priority; the
 * queued ones move to its place in the order. Returns how many waiting tasks changed.
 */
const SET_PRIORITY = `${COMMON}
local js = B .. 'js:' .. ARGV[3]
redis.call('HSET', js, 'pr', ARGV[4])
local n = 0
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'st', 'pr')
  if isOpen(f[1]) and f[2] ~= ARGV[4] then
    if f[1] ~= 'running' then n = n + 1 end
    local was = unqueue(bid)
    redis.call('HSET', t, 'pr', ARGV[4])
    if was > 0 then pushReady(bid) end
  end
end
return n
`;

/** ARGV[3]: jobId. Holds the job's queued tasks, and those it enqueues or gets back later. Returns how many. */
const PAUSE = `${COMMON}
redis.call('HSET', B .. 'js:' .. ARGV[3], 'pz', '1')
local n = 0
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local t = B .. 't:' .. bid
  -- Queued: in the order, or already handed to BullMQ (the claim that fetches it drops it).
  if redis.call('HGET', t, 'st') == 'queued' then
    unqueue(bid)
    redis.call('HSET', t, 'st', 'paused')
    redis.call('SADD', B .. 'paused', bid)
    n = n + 1
  end
end
return n
`;

/**
 * ARGV[3]: jobId. Queues the job's held tasks again, their tags moved up to the queue's virtual
 * time (a paused job is owed nothing for the time it was held). Returns {count, kinds...}.
 */
const RESUME = `${COMMON}
redis.call('HDEL', B .. 'js:' .. ARGV[3], 'pz')
local held, first = {}, {}
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'k', 'tg')
  if f[1] == 'paused' then
    table.insert(held, {bid, f[2], tonumber(f[3]) or 0})
    if not first[f[2]] or (tonumber(f[3]) or 0) < first[f[2]] then first[f[2]] = tonumber(f[3]) or 0 end
  end
end
local shift = {}
for k, tg in pairs(first) do shift[k] = math.max(0, vtime(k) - tg) end
local kinds = {}
for _, h in ipairs(held) do
  redis.call('SREM', B .. 'paused', h[1])
  redis.call('HSET', B .. 't:' .. h[1], 'tg', h[3] + shift[h[2]])
  pushReady(h[1])
  kinds[h[2]] = true
end
local out = {#held}
for k in pairs(kinds) do table.insert(out, k) end
return out
`;

export const SCHEDULE_SCRIPTS = {
  rbtqSetPriority: SET_PRIORITY,
  rbtqPause: PAUSE,
  rbtqResume: RESUME,
} as const;
