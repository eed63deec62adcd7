// What every script of the BullMQ task queue starts with (keys as in lua.ts): settling a task, and
// the claim order the SQL queues keep (../sql/share-tags.ts, ../sql/task-claim.ts), in Redis.
//
// The order: strict priority, then the fair-share tag, then enqueue order. Tasks ready to run wait
// in the adapter's own sorted sets, not in BullMQ's lanes: `rq:<kind>:<priority>` (score: tag;
// member: the zero-padded enqueue order then the bid, so equal tags go in enqueue order) with
// `prios:<kind>` (zset of the priorities present, highest first). A claim takes the first of them
// and only then hands it to BullMQ (its lock stays the lease), so BullMQ's own FIFO never decides.
// Also: `rqn` (hash: tasks in rq per kind), `paused` (set: tasks of paused jobs), `js:<jobId>` (hash:
// pr priority, g group, pz 1 while paused), `sg:<group>` (hash: lt last tag, spf measured seconds per
// frame, spft the spf the group's tags use), `spfts` (hash: spft by group), `sgs:<workspace>` (set:
// its `ws/user` groups), `gq:<group>` (set: the group's queued and paused tasks), `weights` (hash),
// `vmax` (largest tag given). Per task hash `t:<bid>` adds pr, g, tg (tag), u (frames), cs (claim
// time on the adapter's clock, ms).

/**
 * What every script starts with, COMMON's own and the lighter ones' (lua-waits.ts): the key prefix
 * B, BullMQ's queue prefix Q, and the Redis clock.
 */
export const PRELUDE = `
local B = ARGV[1]
local Q = ARGV[2]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;

export const COMMON = `${PRELUDE}
local function isOpen(st) return st == 'queued' or st == 'running' or st == 'held' or st == 'paused' end
local SPF_ALPHA, RETAG, FIRST_SPF, RETAG_EVERY_MS = 0.2, 1.04, 1, 30000
local function member(bid, seq) return string.format('%014d', tonumber(seq) or 0) .. bid end
local function rqKey(k, pr) return B .. 'rq:' .. k .. ':' .. pr end
-- The tag at the head of kind k's queue; with none queued, the largest tag given.
local function vtime(k)
  local pk = B .. 'prios:' .. k
  local ps = redis.call('ZRANGE', pk, 0, 0)
  while ps[1] do
    local h = redis.call('ZRANGE', rqKey(k, ps[1]), 0, 0, 'WITHSCORES')
    if h[1] then return tonumber(h[2]) end
    redis.call('ZREM', pk, ps[1])
    ps = redis.call('ZRANGE', pk, 0, 0)
  end
  return tonumber(redis.call('GET', B .. 'vmax')) or 0
end
local function parentOf(g)
  local i = string.find(g, '/', 1, true)
  if i and i > 1 then return string.sub(g, 1, i - 1) end
  return nil
end
-- Its own weight, else its workspace's divided among the workspace's groups waiting (last tag ahead of v).
local function weightOf(g, v)
  local own = redis.call('HGET', B .. 'weights', g)
  if own then return tonumber(own) end
  local parent = parentOf(g)
  if not parent then return 1 end
  local w = tonumber(redis.call('HGET', B .. 'weights', parent)) or 1
  local n = 1
  for _, s in ipairs(redis.call('SMEMBERS', B .. 'sgs:' .. parent)) do
    if s ~= g and (tonumber(redis.call('HGET', B .. 'sg:' .. s, 'lt')) or 0) > v then n = n + 1 end
  end
  return w / n
end
-- A new task's tag: max(group's last tag, v) + frames x the group's spf / weight.
local function tagTask(k, g, units)
  local v = vtime(k)
  local w = weightOf(g, v)
  local gk = B .. 'sg:' .. g
  local f = redis.call('HMGET', gk, 'lt', 'spft')
  local spft = tonumber(f[2])
  if not spft then
    local vals, sum = redis.call('HVALS', B .. 'spfts'), 0
    for _, x in ipairs(vals) do sum = sum + tonumber(x) end
    spft = FIRST_SPF
    if #vals > 0 then spft = sum / #vals end
    redis.call('HSET', gk, 'spf', spft, 'spft', spft)
    redis.call('HSET', B .. 'spfts', g, spft)
    redis.call('SADD', B .. 'guessed', g)
    local parent = parentOf(g)
    if parent then redis.call('SADD', B .. 'sgs:' .. parent, g) end
  end
  local last = tonumber(f[1]) or v
  if last < v then last = v end
  local tag = last + units * spft / w
  redis.call('HSET', gk, 'lt', tag)
  if tag > (tonumber(redis.call('GET', B .. 'vmax')) or 0) then redis.call('SET', B .. 'vmax', tag) end
  return tag
end
-- Queues a task in its kind's order (or holds it while its job is paused); true when queued.
local function pushReady(bid)
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'k', 'pr', 'tg', 's', 'j', 'g')
  redis.call('SADD', B .. 'gq:' .. (f[6] or ''), bid)
  if redis.call('HGET', B .. 'js:' .. f[5], 'pz') == '1' then
    redis.call('HSET', t, 'st', 'paused')
    redis.call('SADD', B .. 'paused', bid)
    return false
  end
  local pr = f[2] or '0'
  redis.call('HSET', t, 'st', 'queued')
  redis.call('ZADD', rqKey(f[1], pr), tonumber(f[3]) or 0, member(bid, f[4]))
  redis.call('ZADD', B .. 'prios:' .. f[1], -tonumber(pr), pr)
  redis.call('HINCRBY', B .. 'rqn', f[1], 1)
  return true
end
-- Moves the task of kind k from BullMQ's delayed set into the claim order, at the place its
-- priority, tag and enqueue order give it (held while its job is paused): true when queued, false
-- when held, nil when the delayed set does not have it (a claim's BullMQ fetch took it already).
-- BullMQ's copy goes (its keys as BullMQ's removeJobKeys names them), so the claim that takes the
-- task hands it over afresh. Left in BullMQ, a claim would fetch it before the whole order.
local function backInOrder(bid, k)
  if redis.call('ZREM', Q .. k .. ':delayed', bid) == 0 then return nil end
  local jk = Q .. k .. ':' .. bid
  redis.call('DEL', jk, jk .. ':logs', jk .. ':dependencies', jk .. ':processed', jk .. ':failed')
  redis.call('DEL', jk .. ':unsuccessful')
  return pushReady(bid)
end
-- Takes a task out of its kind's order; 1 when it was in it.
local function unqueue(bid)
  local f = redis.call('HMGET', B .. 't:' .. bid, 'k', 'pr', 's')
  if not f[1] then return 0 end
  local n = redis.call('ZREM', rqKey(f[1], f[2] or '0'), member(bid, f[3]))
  if n > 0 then redis.call('HINCRBY', B .. 'rqn', f[1], -1) end
  return n
end
-- Rescales the group's queued tags ahead of v by ratio (its spf was learned).
local function rescale(g, k, ratio)
  local v = vtime(k)
  for _, bid in ipairs(redis.call('SMEMBERS', B .. 'gq:' .. g)) do
    local t = B .. 't:' .. bid
    local f = redis.call('HMGET', t, 'tg', 'st')
    local tg = tonumber(f[1]) or 0
    if tg > v then
      local was = 0
      if f[2] == 'queued' then was = unqueue(bid) end
      redis.call('HSET', t, 'tg', v + (tg - v) * ratio)
      if was > 0 then pushReady(bid) end
    end
  end
  local gk = B .. 'sg:' .. g
  local lt = tonumber(redis.call('HGET', gk, 'lt')) or v
  if lt > v then redis.call('HSET', gk, 'lt', v + (lt - v) * ratio) end
end
-- A group none of whose frames finished yet is tagged with a guess; its running frames have taken at
-- least as long as they ran: once that passes the guess, its tags are rescaled to it (../sql/share-tags.ts).
local function boundGuesses(k, now)
  local guessed = redis.call('SMEMBERS', B .. 'guessed')
  if #guessed == 0 then return end
  local bound = {}
  for _, bid in ipairs(redis.call('ZRANGE', B .. 'lease', 0, -1)) do
    local f = redis.call('HMGET', B .. 't:' .. bid, 'g', 'cs', 'u')
    local u, cs = tonumber(f[3]) or 0, tonumber(f[2])
    if u > 0 and cs then
      local b = (now - cs) / 1000 / u
      if b > (bound[f[1] or ''] or 0) then bound[f[1] or ''] = b end
    end
  end
  for _, g in ipairs(guessed) do
    local gk = B .. 'sg:' .. g
    local spft = tonumber(redis.call('HGET', gk, 'spft')) or FIRST_SPF
    local b = bound[g] or 0
    if b > spft * RETAG then
      rescale(g, k, b / spft)
      redis.call('HSET', gk, 'spf', b, 'spft', b, 'ra', now)
      redis.call('HSET', B .. 'spfts', g, b)
    end
  end
end
-- Charges a finished attempt's slot time (now: the adapter's clock) to its group's spf.
local function charge(bid, now)
  local t = B .. 't:' .. bid
  local f = redis.call('HMGET', t, 'u', 'cs', 'g', 'k')
  local u, cs = tonumber(f[1]) or 0, tonumber(f[2])
  if u <= 0 or not cs or not now then return end
  boundGuesses(f[4], now)
  local gk = B .. 'sg:' .. (f[3] or '')
  local s = redis.call('HMGET', gk, 'spf', 'spft')
  local spf, spft = tonumber(s[1]), tonumber(s[2])
  if not spf or not spft or spft <= 0 then return end
  -- The first measurement replaces the guess outright.
  local m = (now - cs) / 1000 / u
  local was = redis.call('HGET', gk, 'ms')
  if was then spf = spf + SPF_ALPHA * (m - spf) else spf = m end
  redis.call('HSET', gk, 'spf', spf, 'ms', 1)
  redis.call('SREM', B .. 'guessed', f[3] or '')
  local ratio = spf / spft
  -- At most once per RETAG_EVERY_MS of the adapter's clock, its first measurement excepted.
  local due = not was or now - (tonumber(redis.call('HGET', gk, 'ra')) or 0) >= RETAG_EVERY_MS
  if due and (ratio > RETAG or ratio < 1 / RETAG) then
    redis.call('HSET', gk, 'ra', now)
    rescale(f[3] or '', f[4], ratio)
    redis.call('HSET', gk, 'spft', spf)
    redis.call('HSET', B .. 'spfts', f[3] or '', spf)
  end
end
-- Done, and every task that waited only for it is queued (its bid and kind added to out).
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
      redis.call('SREM', B .. 'held', h)
      if pushReady(h) then table.insert(out, {h, redis.call('HGET', ht, 'k')}) end
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
