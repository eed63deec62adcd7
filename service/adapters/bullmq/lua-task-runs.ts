// The job-tasks read of the BullMQ task queue, as a Lua script (one round trip, one consistent
// view). Keys as in lua.ts; per task hash `t:<bid>` the claim also records sa (when the latest
// attempt started, Redis clock, ms) and rw (who ran it, kept once the task ends), enqueue keeps
// the payload as pl, and the `fin` zset's score is when the task ended.

/**
 * ARGV[3]: jobId. The job's tasks, oldest first: {id, kind, state, attempts, last error, holder,
 * last runner, started ms, finished ms, payload source ('p': the task's payload; 'd': BullMQ's
 * job data {jobId, payload}), payload text}, absent values false.
 */
export const JOB_RUNS = `
local B = ARGV[1]
local Q = ARGV[2]
local out = {}
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. ARGV[3], 0, -1)) do
  local f = redis.call('HMGET', B .. 't:' .. bid, 'id', 'k', 'st', 'a', 'e', 'w', 'rw', 'sa', 'pl', 'p')
  if f[1] then
    local src, text = 'p', f[9] or f[10]
    -- Tasks enqueued before pl was kept: the payload lives in BullMQ's job once BullMQ has it.
    if not text then src, text = 'd', redis.call('HGET', Q .. f[2] .. ':' .. bid, 'data') end
    local fin = redis.call('ZSCORE', B .. 'fin', bid)
    table.insert(out, {f[1], f[2], f[3], f[4], f[5] or false, f[6] or false, f[7] or false, f[8] or false, fin or \
false, src, text or false})
  end
end
return out
`;
