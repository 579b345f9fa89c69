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
local out = {}
for i = 0, n - 1 do
  local a = 4 + i * 4
  local ulid, band, eid, run = ARGV[a], KEYS[2 + tonumber(ARGV[a + 1])], ARGV[a + 2], ARGV[a + 3]
  local v = redis.call('HGET', runs, ulid)
  local res = 0
  if v then
    local r, cancel = string.match(v, '^(%d+)|%d+|%d+|%d+|(%d)|')
    if r == run then
      redis.call('XCLAIM', band, group, consumer, 0, eid, 'IDLE', 0, 'JUSTID')
      res = 1
      if cancel == '1' then res = 2 end
    end
  end
  out[#out + 1] = res
end
return out
