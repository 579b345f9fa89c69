-- renew.lua: renew the visibility of a worker's running tasks, fenced
-- by their run, and report cancellations.
--
-- KEYS[1]        run hash (running tasks' state, by ULID)
-- KEYS[2..11]    band streams of priority 0..9
--
-- ARGV[1]        consumer group
-- ARGV[2]        consumer (the worker)
-- ARGV[3]        N; then 4 values per item: ULID, band, entry id, run
--
-- An item renews (XCLAIM IDLE 0 to this consumer) only if its task's Run
-- field holds exactly that run; otherwise the worker lost it (reclaimed and
-- restarted elsewhere, or finished) and nothing changes — renewal never
-- takes a task back.
--
-- Returns one code per item: 0 lost, 1 renewed, 2 renewed and its
-- cancellation was requested.

local runs = KEYS[1]
local group, consumer = ARGV[1], ARGV[2]
local n = tonumber(ARGV[3])
local ulids = {}
for i = 0, n - 1 do ulids[i + 1] = ARGV[4 + i * 4] end
local states = redis.call('HMGET', runs, unpack(ulids))
local out, claims = {}, {}
for i = 0, n - 1 do
  local a = 4 + i * 4
  local p, eid, run = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local v = states[i + 1]
  local res = 0
  if v then
    local r, cancel = string.match(v, '^(%d+)|%d+|%d+|%d+|(%d)|')
    if r == run then
      local ids = claims[p]
      if not ids then ids = {}; claims[p] = ids end
      ids[#ids + 1] = eid
      res = 1
      if cancel == '1' then res = 2 end
    end
  end
  out[#out + 1] = res
end
for p, ids in pairs(claims) do
  local args = {KEYS[2 + tonumber(p)], group, consumer, '0'}
  for _, eid in ipairs(ids) do args[#args + 1] = eid end
  args[#args + 1], args[#args + 2], args[#args + 3] = 'IDLE', '0', 'JUSTID'
  redis.call('XCLAIM', unpack(args))
end
return out
