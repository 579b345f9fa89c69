-- put.lua: publish a batch of messages to a queue, deduplicated by key.
--
-- KEYS[1]          dedup hash: message key -> publisher nonce (live) | tombstone expiry (ms)
-- KEYS[2]          wake stream (subscribers re-read delayed due times)
-- KEYS[3j .. 3j+2] for topic j = 1..T: stream, delayed zset, waiters flag
--
-- ARGV[1]          waiters flag TTL, ms
-- ARGV[2]          N, the number of messages; then 6 values per message:
--                  topic j, message key, data, max size (0 = unbounded), delay ms (0 = now),
--                  nonce (unique per Put call, never all digits; repeated when the call
--                  retries; "" for a random key, which is not entered in the dedup index)
--
-- Returns N results, one per message, in order:
--   "<id>"  published: the new stream entry id
--   1       delayed: parked in the topic's delayed zset until due
--   2       already published by this nonce: an earlier try of the same call
--           succeeded (its reply was lost)
--   0       duplicate: the key is live (queued, in flight, delayed) or tombstoned
--   -1      full: the topic holds max size messages (queued + in flight + delayed);
--           nothing was written and the topic's waiters flag was set
--
-- A message's key is live from publish until it is settled; all messages of a
-- batch are checked in order, so a key repeated within a batch is a duplicate.
-- Entries are "k", key, "d", data for a key in the dedup index, and "r", key,
-- "d", data for a random key.

local dedup, wake = KEYS[1], KEYS[2]
local waiterTTL = ARGV[1]
local n = tonumber(ARGV[2])

local now
local function clock()
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end

local out = {}
local woke = false
for i = 0, n - 1 do
  local a = 3 + i * 6
  local j, key, data = tonumber(ARGV[a]), ARGV[a + 1], ARGV[a + 2]
  local maxsize, delay, nonce = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), ARGV[a + 5]
  local stream, delayed, waiters = KEYS[3 * j], KEYS[3 * j + 1], KEYS[3 * j + 2]

  -- Claim the key, or find out why not. A duplicate answers at once, even
  -- when the topic is full.
  local res, expired
  local kf = 'k'
  if nonce == '' then
    kf = 'r'
  elseif redis.call('HSETNX', dedup, key, nonce) == 0 then
    local v = redis.call('HGET', dedup, key)
    local expiry = tonumber(v)
    if not expiry then
      if v == nonce then res = 2 else res = 0 end
    elseif expiry > clock() then
      res = 0
    else
      expired = true -- a tombstone that has run out
    end
  end
  if res == nil and maxsize > 0
      and redis.call('XLEN', stream) + redis.call('ZCARD', delayed) >= maxsize then
    if kf == 'k' and not expired then redis.call('HDEL', dedup, key) end -- give the claim back
    redis.call('SET', waiters, '1', 'PX', waiterTTL)
    res = -1
  end
  if res == nil and expired then
    redis.call('HSET', dedup, key, nonce)
  end
  if res == nil then
    if delay > 0 then
      local member = string.format('%s0:%d:', kf, #key) .. key .. data
      redis.call('ZADD', delayed, clock() + delay, member)
      woke = true
      res = 1
    else
      res = redis.call('XADD', stream, '*', kf, key, 'd', data)
    end
  end
  out[#out + 1] = res
end
if woke then
  redis.call('XADD', wake, 'MAXLEN', '1', '*', 'w', '1')
end
return out
