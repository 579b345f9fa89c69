-- lease.lua: the concurrency leases of a queue with a limit (Limits field
-- "queue"): at most that many are live at once, across every worker.
--
-- KEYS[1]        limits hash (field "queue": the limit)
-- KEYS[2]        leases zset (member lease name, score expiry in Unix ms)
-- KEYS[3]        wakeup stream (appended to when a full limit frees a slot)
--
-- ARGV[1]        op: "acquire", "renew" or "release"
-- ARGV[2]        lease lifetime, ms (acquire, renew)
-- ARGV[3..]      lease names
--
-- acquire: deletes expired leases, then takes as many of the names, in
--   order, as the limit has room for. Returns {granted, limit, earliest,
--   wakeup}: granted the number taken (when the queue has no limit: all
--   of them, limit 0, and no lease written), earliest the expiry of the earliest live lease
--   (0 for none), wakeup the last id of the wakeup stream ("0-0" for none):
--   a caller granted nothing waits for an entry after it, or until
--   earliest.
-- renew: moves the expiry of those of the names that are live. Returns
--   the number renewed.
-- release: deletes the names; when the limit was full, appends to the
--   wakeup stream. Returns the number deleted.

local limits, leases, wakeup = KEYS[1], KEYS[2], KEYS[3]
local op, ttl = ARGV[1], tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(redis.call('HGET', limits, 'queue') or '0') or 0

if op == 'renew' then
  local n = 0
  for i = 3, #ARGV do
    if redis.call('ZSCORE', leases, ARGV[i]) then
      redis.call('ZADD', leases, now + ttl, ARGV[i])
      n = n + 1
    end
  end
  return n
end

if op == 'release' then
  -- Expired leases count as held here: at worst a wakeup too many.
  local live = redis.call('ZCARD', leases)
  local n = redis.call('ZREM', leases, unpack(ARGV, 3))
  if n > 0 and limit > 0 and live >= limit then
    redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
  end
  return n
end

redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
local live = redis.call('ZCARD', leases)

-- acquire
local want = #ARGV - 2
if limit <= 0 then return {want, 0, 0, '0-0'} end
local granted = math.max(0, math.min(want, limit - live))
for i = 1, granted do
  redis.call('ZADD', leases, now + ttl, ARGV[2 + i])
end
local earliest = 0
local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
if first[2] then earliest = tonumber(first[2]) end
local last = redis.call('XREVRANGE', wakeup, '+', '-', 'COUNT', 1)
local wid = '0-0'
if last[1] then wid = last[1][1] end
return {granted, limit, earliest, wid}
