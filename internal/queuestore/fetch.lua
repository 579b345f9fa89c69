-- fetch.lua: claim up to `credit` messages for one subscription, highest
-- priority topic first, and say how to wait when there is nothing to claim.
--
-- KEYS[1]            wake stream
-- KEYS[2]            dead-letter stream (malformed entries go here)
-- KEYS[3]            stats hash (field "malformed" counts them)
-- KEYS[2j+2], [2j+3] for topic j = 1..T, in priority order: stream, delayed zset
--
-- ARGV[1]            consumer group
-- ARGV[2]            consumer (the subscription)
-- ARGV[3]            credit: the most messages to claim (> 0)
-- ARGV[4]            reclaim min idle, ms; 0 = no reclaim pass this time
-- ARGV[5]            dead-letter stream max length (approximate trim)
-- ARGV[6]            most delayed messages to promote per topic
-- ARGV[7]            T, the number of topics; then T topic names; then T reclaim cursors
-- ARGV[8+2T]         "1" to skip step 3 (the caller reads new entries itself)
--
-- Per topic, in priority order, while credit remains:
--   1. due delayed messages are appended to the topic's stream;
--   2. reclaim pass (if asked): XAUTOCLAIM from the topic's cursor;
--   3. new entries: XREADGROUP ">".
-- A missing group or stream (NOGROUP) is recreated at id 0, so every entry
-- still in the stream (nothing acknowledged is kept) is delivered again
-- (nogroup and ensure_group: internal/delivery/group.lua, prepended).
--
-- Returns { entries, cursors, wait, next due }:
--   entries  flat, 7 values per message: topic j, entry id, delivery count
--            (the fence), prior deliveries, message key, data, keyed (1 when
--            the key field is "k", in the dedup index; 0 for "r", a random key)
--   cursors  the T reclaim cursors to pass next time
--   wait     0 when entries is non-empty; otherwise
--            { wake last id, T stream last ids... } for a blocking XREAD that
--            wakes on anything new
--   next due ms until the next delayed message of these topics is due
--            (-1 = none)

local wake, dead, stats = KEYS[1], KEYS[2], KEYS[3]
local group, consumer = ARGV[1], ARGV[2]
local credit = tonumber(ARGV[3])
local minIdle = tonumber(ARGV[4])
local deadMax = ARGV[5]
local promoteMax = tonumber(ARGV[6])
local T = tonumber(ARGV[7])
local readNewEntries = ARGV[8 + 2 * T] ~= '1'

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- fields returns the key, data, prior delivery count and keyed flag of an
-- entry's field list, or nil when the key or data field is missing. Entries
-- written by this package are "k"|"r", key, "d", data [, "n", prior].
local function fields(list)
  local kf = list[1]
  if (kf == 'k' or kf == 'r') and list[3] == 'd' then
    local keyed = 1
    if kf == 'r' then keyed = 0 end
    if list[5] == 'n' then return list[2], list[4], tonumber(list[6]) or 0, keyed end
    if #list == 4 then return list[2], list[4], 0, keyed end
  end
  local f = {}
  for i = 1, #list, 2 do f[list[i]] = list[i + 1] end
  if f.d == nil then return nil end
  if f.k ~= nil then return f.k, f.d, tonumber(f.n) or 0, 1 end
  if f.r ~= nil then return f.r, f.d, tonumber(f.n) or 0, 0 end
  return nil
end

local entries = {}
local function take(j, name, stream, e, count)
  local id = e[1]
  local key, data, prior, keyed = fields(e[2])
  if not key then
    local args = { 'XADD', dead, 'MAXLEN', '~', deadMax, '*', 'topic', name, 'id', id,
      'reason', 'malformed entry: missing "k" (key) or "d" (data) field' }
    for i = 1, #e[2] do args[#args + 1] = e[2][i] end
    redis.call(unpack(args))
    redis.call('XACK', stream, group, id)
    redis.call('XDEL', stream, id)
    redis.call('HINCRBY', stats, 'malformed', 1)
    return
  end
  local n = #entries
  entries[n + 1], entries[n + 2], entries[n + 3] = j, id, count
  entries[n + 4], entries[n + 5], entries[n + 6], entries[n + 7] = prior, key, data, keyed
  credit = credit - 1
end

local function promote(stream, delayed)
  local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, promoteMax)
  if #due == 0 then return end
  for _, m in ipairs(due) do
    local kf, n, kl, at = string.match(m, '^([kr])(%d+):(%d+):()')
    kl = tonumber(kl)
    local key, data = string.sub(m, at, at + kl - 1), string.sub(m, at + kl)
    if n == '0' then
      redis.call('XADD', stream, '*', kf, key, 'd', data)
    else
      redis.call('XADD', stream, '*', kf, key, 'd', data, 'n', n)
    end
  end
  redis.call('ZREM', delayed, unpack(due))
end

local function reclaim(j, name, stream, cursor)
  local r = redis.pcall('XAUTOCLAIM', stream, group, consumer, minIdle, cursor, 'COUNT', credit)
  if nogroup(r) then
    ensure_group(stream, group)
    return '0-0'
  elseif type(r) == 'table' and r.err then
    redis.call('XAUTOCLAIM', stream, group, consumer, minIdle, cursor, 'COUNT', credit) -- raises r.err
  end
  for _, e in ipairs(r[2]) do
    if e then
      local p = redis.call('XPENDING', stream, group, e[1], e[1], 1)
      take(j, name, stream, e, p[1][4])
    end
  end
  return r[1]
end

local function readNew(j, name, stream)
  local r = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', stream, '>')
  if nogroup(r) then
    ensure_group(stream, group)
    r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', stream, '>')
  elseif type(r) == 'table' and r.err then
    redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', stream, '>') -- raises
  end
  if not r then return end
  for _, e in ipairs(r[1][2]) do take(j, name, stream, e, 1) end
end

local cursors = {}
for j = 1, T do
  local stream, delayed = KEYS[2 * j + 2], KEYS[2 * j + 3]
  local name, cursor = ARGV[7 + j], ARGV[7 + T + j]
  promote(stream, delayed)
  if credit > 0 and minIdle > 0 then cursor = reclaim(j, name, stream, cursor) end
  if credit > 0 and readNewEntries then readNew(j, name, stream) end
  cursors[j] = cursor
end

local nextDue = -1
for j = 1, T do
  local d = redis.call('ZRANGE', KEYS[2 * j + 3], 0, 0, 'WITHSCORES')
  if #d > 0 then
    local due = math.max(0, tonumber(d[2]) - now)
    if nextDue < 0 or due < nextDue then nextDue = due end
  end
end

if #entries > 0 then
  return { entries, cursors, 0, nextDue }
end

local function lastID(stream)
  local r = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
  if #r == 0 then return '0-0' end
  return r[1][1]
end

-- delivered returns the id up to which the group has delivered a stream's
-- entries: where a wait must start when the caller reads new entries itself
-- (entries after it are undelivered even if they predate this script).
local function delivered(stream)
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  if type(groups) ~= 'table' or groups.err then return '0-0' end
  for _, g in ipairs(groups) do
    local name, last
    for i = 1, #g, 2 do
      if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
    end
    if name == group then return last end
  end
  return '0-0'
end

local wait = { lastID(wake) }
for j = 1, T do
  if readNewEntries then
    wait[#wait + 1] = lastID(KEYS[2 * j + 2])
  else
    wait[#wait + 1] = delivered(KEYS[2 * j + 2])
  end
end
return { entries, cursors, wait, nextDue }
