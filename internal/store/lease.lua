-- lease.lua: the flow-control limits of a queue, checked before a worker
-- claims: a concurrency limit (limits field "queue": at most that many
-- leases live at once, across every worker) and a rate limit (field
-- "rate" = "<n>/<period ms>/<burst>": GCRA, at most n claims per period,
-- bursts of at most burst; field "tat" its theoretical arrival time, ms),
-- and a pause of both (field "pause": no claim before that time, ms).
--
-- KEYS[1]        limits hash
-- KEYS[2]        leases zset (member lease name, score expiry in Unix ms)
-- KEYS[3]        wakeup stream (appended to when a full limit frees a slot)
--
-- ARGV[1]        op: "acquire", "hold", "renew", "release" or "pause"
-- ARGV[2]        acquire, renew: lease lifetime, ms; pause: its length, ms
-- ARGV[3]        release: claims granted and not used, given back to the
--                rate limit
-- ARGV[4..]      lease names (acquire: one per claim wanted)
--
-- acquire: deletes expired leases, then grants as many claims, in order,
--   as the limits have room for; with a concurrency limit each granted
--   claim's name becomes a lease. Returns {granted, mode, retry, wakeup}:
--   mode 0 when the queue has no limit (everything granted, nothing
--   written), 1 for a rate limit alone (no lease written), 2 with a
--   concurrency limit (leases written); when nothing was granted, retry is
--   the time (Unix ms) something may be (the pause's end, the next token,
--   the earliest lease expiry; 0: only a wakeup) and wakeup the wakeup
--   stream's last id ("0-0" for none), to wait after.
-- hold: as acquire, granting every claim whatever the limits (claims a
--   worker made before it knew of a limit: they run, and count).
-- renew: moves the expiry of those of the names that are live. Returns
--   the number renewed.
-- release: deletes the names, and gives the unused claims back to the
--   rate limit; when the concurrency limit was full, appends to the wakeup
--   stream. Returns the number of names deleted.
-- pause: no claim is granted before now + ARGV[2]. Returns 1.

local limits, leases, wakeup = KEYS[1], KEYS[2], KEYS[3]
local op, ms = ARGV[1], tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', limits, 'queue', 'rate', 'tat', 'pause')
local limit = tonumber(f[1] or '0') or 0
local rn, rperiod, rburst
if f[2] then
  rn, rperiod, rburst = string.match(f[2], '^(%d+)/(%d+)/(%d+)$')
  rn, rperiod, rburst = tonumber(rn), tonumber(rperiod), tonumber(rburst)
end
local tat = tonumber(f[3] or '0') or 0
local paused = tonumber(f[4] or '0') or 0

if op == 'renew' then
  local n = 0
  for i = 4, #ARGV do
    if redis.call('ZSCORE', leases, ARGV[i]) then
      redis.call('ZADD', leases, now + ms, ARGV[i])
      n = n + 1
    end
  end
  return n
end

if op == 'pause' then
  redis.call('HSET', limits, 'pause', math.max(paused, now + ms))
  return 1
end

if op == 'release' then
  local unused = tonumber(ARGV[3])
  if rn and unused > 0 then
    redis.call('HSET', limits, 'tat', string.format('%.3f', tat - unused * rperiod / rn))
  end
  if #ARGV < 4 then return 0 end
  -- Expired leases count as held here: at worst a wakeup too many.
  local live = redis.call('ZCARD', leases)
  local n = redis.call('ZREM', leases, unpack(ARGV, 4))
  if n > 0 and limit > 0 and live >= limit then
    redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
  end
  return n
end

-- acquire
local want = #ARGV - 3
if limit <= 0 and not rn then return {want, 0, 0, '0-0'} end
local granted, retry = want, 0
local hold = op == 'hold'
if now < paused and not hold then granted, retry = 0, paused end
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  if not hold then granted = math.max(0, math.min(granted, limit - redis.call('ZCARD', leases))) end
  if granted == 0 and retry == 0 then
    local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
    if first[2] then retry = tonumber(first[2]) end
  end
end
if rn and granted > 0 and not hold then
  -- GCRA: each claim moves tat by the emission interval e; one is allowed
  -- while tat - now stays within the burst's tolerance (burst - 1) * e.
  local e = rperiod / rn
  local tau = (rburst - 1) * e
  local base = math.max(tat, now)
  local avail = math.floor((now + tau + e - base) / e + 1e-9)
  granted = math.max(0, math.min(granted, avail))
  if granted > 0 then
    redis.call('HSET', limits, 'tat', string.format('%.3f', base + granted * e))
  else
    retry = math.ceil(base - tau)
  end
end
for i = 1, (limit > 0 and granted or 0) do
  redis.call('ZADD', leases, now + ms, ARGV[3 + i])
end
local mode = 1
if limit > 0 then mode = 2 end
local wid = '0-0'
if granted == 0 then
  local last = redis.call('XREVRANGE', wakeup, '+', '-', 'COUNT', 1)
  if last[1] then wid = last[1][1] end
end
return {granted, mode, retry, wid}
