-- ack.lua: acknowledge a batch of deliveries of one topic held by one
-- subscription, each fenced by the delivery it belongs to.
--
-- KEYS[1]  topic stream
-- KEYS[2]  dedup hash: message key -> publisher nonce (live) | tombstone expiry (ms)
-- KEYS[3]  tombstone zset: message key -> expiry (ms)
-- KEYS[4]  topic waiters flag
-- KEYS[5]  topic room list
--
-- ARGV[1]  consumer group
-- ARGV[2]  consumer (the subscription)
-- ARGV[3]  acknowledgement tombstone TTL, ms (0 = none)
-- ARGV[4]  room list TTL, ms
-- ARGV[5]  room list cap
-- ARGV[6]  fence range count: 0 fences each ack with its own XPENDING; n > 0
--          reads the consumer's pending entries in [ARGV[7], ARGV[8]] (at most
--          n) with one XPENDING and fences against that list
-- ARGV[7]  first id of the range
-- ARGV[8]  last id of the range
-- ARGV[9]… 3 values per ack: entry id, fence (delivery count), message key
--          ("" for a message published without a key: not in the dedup index)
--
-- An ack acts only if the entry is pending for this consumer with exactly
-- that delivery count; otherwise someone else reclaimed it (or it is gone)
-- and nothing changes. Acted acks delete their entries (XACK, XDEL), forget
-- their keys (or tombstone them for the TTL), and push one element per freed
-- slot to the room list when publishers wait for room.
--
-- Returns one result per ack, in order: 1 acknowledged, 0 not owner.

local stream, dedup, tombs, waiters, room = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local group, consumer = ARGV[1], ARGV[2]
local tombTTL = tonumber(ARGV[3])
local roomTTL, roomCap = ARGV[4], tonumber(ARGV[5])
local rangeCount = tonumber(ARGV[6])

local function owns(id, fence)
  local p = redis.pcall('XPENDING', stream, group, id, id, 1)
  if type(p) ~= 'table' or p.err or #p == 0 then return false end
  return p[1][2] == consumer and p[1][4] == fence
end

local function idAfter(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end

local counts, truncatedAfter
if rangeCount > 0 then
  counts = {}
  local p = redis.pcall('XPENDING', stream, group, ARGV[7], ARGV[8], rangeCount, consumer)
  if type(p) == 'table' and not p.err then
    for _, e in ipairs(p) do counts[e[1]] = e[4] end
    if #p >= rangeCount then truncatedAfter = p[#p][1] end
  end
end

local ids, ks, out = {}, {}, {}
for i = 9, #ARGV, 3 do
  local id, fence, key = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local ok
  if counts then
    local c = counts[id]
    if c then
      ok = c == fence
    else
      ok = truncatedAfter ~= nil and idAfter(id, truncatedAfter) and owns(id, fence)
    end
  else
    ok = owns(id, fence)
  end
  if ok then
    ids[#ids + 1] = id
    if key ~= '' then ks[#ks + 1] = key end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end

if #ids == 0 then return out end
redis.call('XACK', stream, group, unpack(ids))
redis.call('XDEL', stream, unpack(ids))

if #ks > 0 then
  if tombTTL > 0 then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local exp = now + tombTTL
    local hargs, zargs = {}, {}
    for _, k in ipairs(ks) do
      hargs[#hargs + 1], hargs[#hargs + 2] = k, exp
      zargs[#zargs + 1], zargs[#zargs + 2] = exp, k
    end
    redis.call('HSET', dedup, unpack(hargs))
    redis.call('ZADD', tombs, unpack(zargs))
    -- sweep a few expired tombstones (a key published again since then is live)
    local expired = redis.call('ZRANGEBYSCORE', tombs, '-inf', now, 'LIMIT', 0, 64)
    if #expired > 0 then
      for _, k in ipairs(expired) do
        local v = tonumber(redis.call('HGET', dedup, k))
        if v and v <= now then redis.call('HDEL', dedup, k) end
      end
      redis.call('ZREM', tombs, unpack(expired))
    end
  else
    redis.call('HDEL', dedup, unpack(ks))
  end
end

if redis.call('EXISTS', waiters) == 1 then
  local tokens = {}
  for t = 1, math.min(#ids, roomCap) do tokens[t] = '1' end
  redis.call('LPUSH', room, unpack(tokens))
  redis.call('LTRIM', room, 0, roomCap - 1)
  redis.call('PEXPIRE', room, roomTTL)
end
return out
