// The queue-load read of the BullMQ task queue (extension workers), as a Lua script: tasks held
// for their dependencies are in no BullMQ queue yet, so their kinds come from their hashes
// (keys as in lua.ts). One round trip, however many are held.

/** The kind of every held task (dependencies, or a paused job). */
export const HELD_KINDS = `
local B = ARGV[1]
local out = {}
for _, bid in ipairs(redis.call('SMEMBERS', B .. 'held')) do
  local k = redis.call('HGET', B .. 't:' .. bid, 'k')
  if k then table.insert(out, k) end
end
-- Held while their job is paused: waiting too.
for _, bid in ipairs(redis.call('SMEMBERS', B .. 'paused')) do
  local k = redis.call('HGET', B .. 't:' .. bid, 'k')
  if k then table.insert(out, k) end
end
return out
`;
