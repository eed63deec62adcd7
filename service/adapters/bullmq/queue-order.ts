// The QueueOrder reads (service/ports/queue-order.ts) on the BullMQ queue: Lua over the adapter's
// own claim order (keys as in lua-common.ts: `rq:<kind>:<priority>` scored by tag, members the
// zero-padded enqueue order then the bid; `prios:<kind>`; `gq:<group>`; `spfts`; `guessed`), so
// each read sees one instant of the queue. Sent with EVAL, not among the claim's scripts: a
// dashboard read, never on the claim's path. The walk is as long as the queue ahead: for a person
// looking at one job, not for a loop.
import type { Redis } from 'ioredis';
import { TASK_KINDS } from '../../ports/tasks.js';
import type { GroupQueueLoad, QueueAheadCounts } from '../../ports/queue-order.js';
import type { KeySpace } from './keys.js';

/** ARGV: own prefix, jobId, kinds... Returns nil, or {tasks, frames, jobs}. */
const QUEUE_AHEAD = `
local B, job = ARGV[1], ARGV[2]
local function member(bid, seq) return string.format('%014d', tonumber(seq) or 0) .. bid end
local hpr, htg, htgRaw, hmem
for _, bid in ipairs(redis.call('ZRANGE', B .. 'job:' .. job, 0, -1)) do
  local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'pr', 'tg', 's', 'u')
  if f[1] == 'queued' and (tonumber(f[5]) or 0) > 0 then
    local pr, tg, m = tonumber(f[2]) or 0, tonumber(f[3]) or 0, member(bid, f[4])
    if not hpr or pr > hpr or (pr == hpr and (tg < htg or (tg == htg and m < hmem))) then
      hpr, htg, htgRaw, hmem = pr, tg, f[3] or '0', m
    end
  end
end
if not hpr then return false end
local tasks, frames, jobs, seen = 0, 0, 0, {}
local function count(m)
  local f = redis.call('HMGET', B .. 't:' .. string.sub(m, 15), 'j', 'u')
  local u = tonumber(f[2]) or 0
  if u > 0 and f[1] ~= job then
    tasks = tasks + 1
    frames = frames + u
    if f[1] and not seen[f[1]] then
      seen[f[1]] = true
      jobs = jobs + 1
    end
  end
end
for i = 3, #ARGV do
  local k = ARGV[i]
  for _, p in ipairs(redis.call('ZRANGE', B .. 'prios:' .. k, 0, -1)) do
    local key = B .. 'rq:' .. k .. ':' .. p
    local pr = tonumber(p) or 0
    if pr > hpr then
      for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do count(m) end
    elseif pr == hpr then
      for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. htgRaw)) do count(m) end
      for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, htgRaw, htgRaw)) do
        if m < hmem then count(m) end
      end
    end
  end
end
return {tasks, frames, jobs}
`;

/** ARGV: own prefix. Returns {group, waitingFrames, waitingJobs, pausedFrames, spf or ''} per group. */
const GROUP_LOADS = `
local B = ARGV[1]
local out = {}
for _, g in ipairs(redis.call('HKEYS', B .. 'spfts')) do
  local wf, pf, jobs, seen = 0, 0, 0, {}
  for _, bid in ipairs(redis.call('SMEMBERS', B .. 'gq:' .. g)) do
    local f = redis.call('HMGET', B .. 't:' .. bid, 'st', 'u', 'j')
    local u = tonumber(f[2]) or 0
    if u > 0 and f[1] == 'paused' then pf = pf + u end
    if u > 0 and f[1] == 'queued' then
      wf = wf + u
      if f[3] and not seen[f[3]] then
        seen[f[3]] = true
        jobs = jobs + 1
      end
    end
  end
  local spf = ''
  if redis.call('SISMEMBER', B .. 'guessed', g) == 0 then spf = redis.call('HGET', B .. 'sg:' .. g, 'spf') or '' end
  table.insert(out, {g, wf, jobs, pf, spf})
end
return out
`;

export async function queueAhead(client: Redis, keys: KeySpace, jobId: string): Promise<QueueAheadCounts | null> {
  const r = (await client.eval(QUEUE_AHEAD, 0, keys.own, jobId, ...TASK_KINDS)) as number[] | null;
  return r ? { tasks: Number(r[0]), frames: Number(r[1]), jobs: Number(r[2]) } : null;
}

export async function groupLoads(client: Redis, keys: KeySpace): Promise<GroupQueueLoad[]> {
  const rows = (await client.eval(GROUP_LOADS, 0, keys.own)) as [string, number, number, number, string][];
  return rows
    .filter(([, waiting, , paused, spf]) => waiting > 0 || paused > 0 || spf !== '')
    .map(([group, waitingFrames, waitingJobs, pausedFrames, spf]) => ({
      group,
      waitingFrames: Number(waitingFrames),
      waitingJobs: Number(waitingJobs),
      pausedFrames: Number(pausedFrames),
      secondsPerFrame: spf === '' ? null : Number(spf),
    }));
}
