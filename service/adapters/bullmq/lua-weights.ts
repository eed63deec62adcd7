// The operator's fair-share weights in the BullMQ task queue, as a Lua script (keys as in lua.ts and
// lua-common.ts): a weight changed re-tags what its groups have waiting, as ../sql/share-weights.ts.
import { COMMON } from './lua-common.js';

/**
 * ARGV[3..4]: group, weight. Sets the weight and moves the waiting tags ahead of each kind's virtual
 * time by old / new weight (tags were computed with the old one), for the group and, when it is a
 * workspace, for its `ws/user` groups without a weight of their own. Returns how many tasks moved.
 */
const SET_WEIGHT = `${COMMON}
local g, w = ARGV[3], tonumber(ARGV[4])
local wk = B .. 'weights'
local parent = parentOf(g)
local old = tonumber(redis.call('HGET', wk, g))
if not old and parent then old = tonumber(redis.call('HGET', wk, parent)) end
redis.call('HSET', wk, g, ARGV[4])
local ratio = (old or 1) / w
if ratio == 1 then return 0 end
local groups = {g}
if not parent then
  for _, s in ipairs(redis.call('SMEMBERS', B .. 'sgs:' .. g)) do
    if not redis.call('HGET', wk, s) then table.insert(groups, s) end
  end
end
local vs, least, n = {}, nil, 0
for _, grp in ipairs(groups) do
  for _, bid in ipairs(redis.call('SMEMBERS', B .. 'gq:' .. grp)) do
    local t = B .. 't:' .. bid
    local f = redis.call('HMGET', t, 'tg', 'st', 'k')
    if f[3] and (f[2] == 'queued' or f[2] == 'paused') then
      if not vs[f[3]] then vs[f[3]] = vtime(f[3]) end
      local v, tg = vs[f[3]], tonumber(f[1]) or 0
      if not least or v < least then least = v end
      if tg > v then
        local was = 0
        if f[2] == 'queued' then was = unqueue(bid) end
        redis.call('HSET', t, 'tg', v + (tg - v) * ratio)
        if was > 0 then pushReady(bid) end
        n = n + 1
      end
    end
  end
end
local v = least or vtime('render-chunk')
for _, grp in ipairs(groups) do
  local gk = B .. 'sg:' .. grp
  local lt = tonumber(redis.call('HGET', gk, 'lt'))
  if lt and lt > v then redis.call('HSET', gk, 'lt', v + (lt - v) * ratio) end
end
return n
`;

export const WEIGHT_SCRIPTS = { rbtqSetWeight: SET_WEIGHT } as const;
