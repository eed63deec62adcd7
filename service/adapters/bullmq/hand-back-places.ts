// Hand-back places (WaitingPriority.takeHandBackPlace) on the BullMQ queue: keys
// `<own>hb:<job>:<i>` set with NX and a time to live, i below the job's queued tasks of the kinds
// asked for (its task index `job:<job>`, at most MAX_HAND_BACK_PLACES counted). One Lua call, so
// the count and the take are one instant for every worker sharing the Redis.
import type { Redis } from 'ioredis';
import type { TaskKind } from '../../ports/tasks.js';
import { MAX_HAND_BACK_PLACES } from '../../ports/waiting-priority.js';
import type { KeySpace } from './keys.js';

/** ARGV: own prefix, job id, holder, ttl ms, max places, kinds... Returns 1 when a place is held. */
const TAKE_PLACE = `
local B, J, H, TTL, MAX = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local kinds = {}
for i = 6, #ARGV do kinds[ARGV[i]] = true end
local n = 0
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. J, 0, -1)) do
  local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'k')
  if f[1] == 'queued' and kinds[f[2]] then
    n = n + 1
    if n >= MAX then break end
  end
end
for i = 0, n - 1 do
  local k = B .. 'hb:' .. J .. ':' .. i
  if redis.call('SET', k, H, 'NX', 'PX', TTL) then return 1 end
  if redis.call('GET', k) == H then
    redis.call('PEXPIRE', k, TTL)
    return 1
  end
end
return 0
`;

export async function takeHandBackPlace(
  client: Redis,
  keys: KeySpace,
  o: { jobId: string; kinds: readonly TaskKind[]; holder: string; ttlMs: number },
): Promise<boolean> {
  if (o.kinds.length === 0) return false;
  const args = [keys.own, o.jobId, o.holder, String(Math.max(1, Math.round(o.ttlMs))), String(MAX_HAND_BACK_PLACES)];
  return (await client.eval(TAKE_PLACE, 0, ...args, ...o.kinds)) === 1;
}
