// The WaitingPriority read (service/ports/waiting-priority.ts) on the BullMQ queue. New tasks wait
// in the adapter's own claim order (lua-common.ts: `prios:<kind>` highest first, then
// `rq:<kind>:<priority>` by tag): the head of the highest non-empty priority of a kind is the next
// task of the order. Tasks BullMQ holds already (a release, a retry that is due, a task handed
// over) are fetched before the order (claim.ts), so the first few of BullMQ's `wait` list and due
// `delayed` set count too: without them a task handed back by a preemption would hide the task
// that preempted it once BullMQ has it. Read-only Lua, so the read sees one instant; its walk is at
// most the priorities present (0-100) plus those few.
import type { Redis } from 'ioredis';
import type { TaskKind } from '../../ports/tasks.js';
import type { WaitingTop } from '../../ports/waiting-priority.js';
import type { KeySpace } from './keys.js';

/** ARGV: own prefix, BullMQ prefix, kinds... Returns nil, or {priority, jobId}. */
const TOP_WAITING = `
local B, Q = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local best, job
local function held(bid)
  local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'pr', 'j')
  local pr = tonumber(f[2]) or 0
  if f[1] == 'queued' and (not best or pr > best) then best, job = pr, f[3] or '' end
end
for i = 3, #ARGV do
  local k = ARGV[i]
  for _, bid in ipairs(redis.call('LRANGE', Q .. k .. ':wait', 0, 19)) do held(bid) end
  -- BullMQ scores a delayed job by its due time x 4096 (plus a counter).
  for _, bid in ipairs(redis.call('ZRANGEBYSCORE', Q .. k .. ':delayed', '-inf', (now + 1) * 4096, 'LIMIT', 0, 20)) do
    held(bid)
  end
  for _, p in ipairs(redis.call('ZRANGE', B .. 'prios:' .. k, 0, -1)) do
    local h = redis.call('ZRANGE', B .. 'rq:' .. k .. ':' .. p, 0, 0)
    if h[1] then
      local pr = tonumber(p) or 0
      if not best or pr > best then
        best = pr
        job = redis.call('HGET', B .. 't:' .. string.sub(h[1], 15), 'j') or ''
      end
      break
    end
  end
end
if not best then return false end
return {tostring(best), job}
`;

export async function topWaiting(
  client: Redis,
  keys: KeySpace,
  kinds: readonly TaskKind[],
): Promise<WaitingTop | undefined> {
  if (kinds.length === 0) return undefined;
  const r = (await client.eval(TOP_WAITING, 0, keys.own, keys.bull, ...kinds)) as [string, string] | null;
  return r ? { priority: Number(r[0]), jobId: r[1] } : undefined;
}
