-- settle.lua: act on deliveries held by one subscription, each fenced by the
-- delivery it belongs to, in one batch. (Acks, the hot path, are ack.lua.)
--
-- KEYS[1]                 dedup hash: message key -> publisher nonce (live) | tombstone expiry (ms)
-- KEYS[2]                 tombstone zset: message key -> expiry (ms)
-- KEYS[3]                 wake stream
-- KEYS[4]                 dead-letter stream
-- KEYS[5]                 stats hash (field "malformed")
-- KEYS[4j+2 .. 4j+5]      for topic j = 1..T: stream, delayed zset, waiters flag, room list
--
-- ARGV[1]                 consumer group
-- ARGV[2]                 consumer (the subscription)
-- ARGV[3]                 acknowledgement tombstone TTL, ms (0 = none)
-- ARGV[4]                 waiters flag and room list TTL, ms
-- ARGV[5]                 dead-letter stream max length (approximate trim)
-- ARGV[6]                 room list cap
-- ARGV[7]                 T, the number of topics; then T topic names
-- ARGV[8+T]               N, the number of items; then 5 values per item:
--                         op, topic j, entry id, fence, a
--
-- The fence is the delivery count the subscription saw. An item acts only if
-- the entry is pending for this consumer with exactly that delivery count;
-- otherwise someone else reclaimed it (or it is gone) and nothing changes.
--
-- Ops:
--   "b" hand back: keep the entry pending but make it reclaimable by anyone now
--                  (idle time set to the epoch); same id, same delivery count
--   "e" extend:    reset the entry's idle time (visibility renewal)
--   "n" nak:       move the message to the topic's delayed zset, due in a ms
--   "r" release:   move the message to topic a (an index; b = max size of that
--                  topic, 0 = unbounded, ignored when it is the message's own
--                  topic) as a new entry at its tail; a and b are "a:b"
--   "t" term:      move the message to the dead-letter stream with reason a;
--                  its key is forgotten (or tombstoned) as by an ack
--   "m" malformed: the entry lacks its key or data field: move its raw fields
--                  to the dead-letter stream and count it
--
-- Messages keep their key field: "k" for a key in the dedup index, "r" for a
-- random key (published without one), which is not.
--
-- Returns N results, one per item, in order:
--   1       done
--   "<id>"  release done: the new entry id
--   0       not owner: nothing changed
--   -1      release only: destination full; nothing changed, its waiters flag set
--
-- Whenever an item frees a slot in a topic whose waiters flag exists, one
-- element is pushed to that topic's room list, waking one waiting publisher.

local dedup, tombs, wake, dead, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local group, consumer = ARGV[1], ARGV[2]
local tombTTL = tonumber(ARGV[3])
local waiterTTL = ARGV[4]
local deadMax = ARGV[5]
local roomCap = tonumber(ARGV[6])
local T = tonumber(ARGV[7])
local N = tonumber(ARGV[8 + T])

local now
local function clock()
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end

local function stream(j) return KEYS[4 * j + 2] end
local function delayed(j) return KEYS[4 * j + 3] end
local function waiters(j) return KEYS[4 * j + 4] end
local function room(j) return KEYS[4 * j + 5] end

local function owns(s, id, fence)
  local p = redis.pcall('XPENDING', s, group, id, id, 1)
  if type(p) ~= 'table' or p.err or #p == 0 then return false end
  return p[1][2] == consumer and p[1][4] == fence
end

-- entry returns the entry's key field name ("k" or "r"), key, data and prior
-- delivery count, or nil when the entry is gone or malformed.
local function entry(s, id)
  local r = redis.call('XRANGE', s, id, id)
  if #r == 0 then return nil end
  local f = {}
  local list = r[1][2]
  for i = 1, #list, 2 do f[list[i]] = list[i + 1] end
  local kf = 'k'
  if f.k == nil then kf = 'r' end
  if f[kf] == nil or f.d == nil then return nil end
  return kf, f[kf], f.d, tonumber(f.n) or 0
end

local function remove(s, id)
  redis.call('XACK', s, group, id)
  redis.call('XDEL', s, id)
end

local function freed(j)
  if redis.call('EXISTS', waiters(j)) == 1 then
    redis.call('LPUSH', room(j), '1')
    redis.call('LTRIM', room(j), 0, roomCap - 1)
    redis.call('PEXPIRE', room(j), waiterTTL)
  end
end

local function forget(key)
  if tombTTL > 0 then
    local exp = clock() + tombTTL
    redis.call('HSET', dedup, key, exp)
    redis.call('ZADD', tombs, exp, key)
  else
    redis.call('HDEL', dedup, key)
  end
end

local woke = false
local out = {}
for i = 0, N - 1 do
  local x = 9 + T + i * 5
  local op, j, id, fence, a = ARGV[x], tonumber(ARGV[x + 1]), ARGV[x + 2], tonumber(ARGV[x + 3]), ARGV[x + 4]
  local s = stream(j)
  local res = 0
  if owns(s, id, fence) then
    res = 1
    if op == 'e' then
      redis.call('XCLAIM', s, group, consumer, 0, id, 'IDLE', 0, 'RETRYCOUNT', fence, 'JUSTID')
    elseif op == 'b' then
      redis.call('XCLAIM', s, group, consumer, 0, id, 'TIME', 0, 'RETRYCOUNT', fence, 'JUSTID')
      woke = true
    elseif op == 'm' then
      local r = redis.call('XRANGE', s, id, id)
      local args = { 'XADD', dead, 'MAXLEN', '~', deadMax, '*', 'topic', ARGV[7 + j], 'id', id,
        'reason', 'malformed entry: missing "k" (key) or "d" (data) field' }
      if #r > 0 then
        for _, v in ipairs(r[1][2]) do args[#args + 1] = v end
      end
      redis.call(unpack(args))
      remove(s, id)
      redis.call('HINCRBY', stats, 'malformed', 1)
    else
      local kf, k, d, prior = entry(s, id)
      if not kf then
        -- pending but gone from the stream, or malformed: nothing to move
        res = 0
      elseif op == 'n' then
        remove(s, id)
        local member = string.format('%s%d:%d:', kf, prior + fence, #k) .. k .. d
        redis.call('ZADD', delayed(j), clock() + tonumber(a), member)
        woke = true
      elseif op == 't' then
        redis.call('XADD', dead, 'MAXLEN', '~', deadMax, '*', 'topic', ARGV[7 + j], 'id', id,
          'key', k, 'data', d, 'deliveries', prior + fence, 'reason', a)
        remove(s, id)
        if kf == 'k' then forget(k) end
        freed(j)
      elseif op == 'r' then
        local dj, max = string.match(a, '^(%d+):(%d+)$')
        dj, max = tonumber(dj), tonumber(max)
        local dst = stream(dj)
        if dj ~= j and max > 0 and redis.call('XLEN', dst) + redis.call('ZCARD', delayed(dj)) >= max then
          redis.call('SET', waiters(dj), '1', 'PX', waiterTTL)
          res = -1
        else
          remove(s, id)
          res = redis.call('XADD', dst, '*', kf, k, 'd', d, 'n', prior + fence)
          if dj ~= j then freed(j) end
        end
      end
    end
  end
  out[#out + 1] = res
end

if woke then
  redis.call('XADD', wake, 'MAXLEN', '1', '*', 'w', '1')
end
return out
