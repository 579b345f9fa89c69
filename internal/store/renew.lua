-- renew.lua: renew the visibility of a worker's running tasks, fenced
-- by their run, and report cancellations.
--
-- KEYS[1..10]    band streams of priority 0..9
-- KEYS[11..]     the task hash of each item, in order
--
-- ARGV[1]        consumer group
-- ARGV[2]        consumer (the worker)
-- ARGV[3]        N; then 3 values per item: band, entry id, run
--
-- An item renews (XCLAIM IDLE 0 to this consumer) only if its task is
-- RUNNING with exactly that run; otherwise the worker lost it (reclaimed and
-- restarted elsewhere) and nothing changes — renewal never takes a task back.
--
-- Returns one code per item: 0 lost, 1 renewed, 2 renewed and its
-- cancellation was requested.

local group, consumer = ARGV[1], ARGV[2]
local n = tonumber(ARGV[3])
local out = {}
for i = 0, n - 1 do
  local a = 4 + i * 3
  local band, eid, run = KEYS[1 + tonumber(ARGV[a])], ARGV[a + 1], ARGV[a + 2]
  local f = redis.call('HMGET', KEYS[11 + i], 'status', 'run', 'cancel')
  local res = 0
  if f[1] == 'RUNNING' and f[2] == run then
    redis.call('XCLAIM', band, group, consumer, 0, eid, 'IDLE', 0, 'JUSTID')
    res = 1
    if f[3] == '1' then res = 2 end
  end
  out[#out + 1] = res
end
return out
