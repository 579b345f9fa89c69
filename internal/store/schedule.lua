-- schedule.lua: create, change or delete one schedule (periodic task) of
-- a queue.
--
-- KEYS[1]        periodic hash (definitions by name)
-- KEYS[2]        periodic:due zset (active schedules by next tick, ms)
-- KEYS[3]        periodic:fired hash (last fired tick by name)
-- KEYS[4]        wakeup stream (the scheduler's leader waits on it)
--
-- ARGV[1]        "put" or "del"
-- ARGV[2]        schedule name
-- put:
-- ARGV[3]        definition (JSON)
-- ARGV[4]        next tick, Unix ms; "" when paused
-- ARGV[5]        baseline tick, Unix ms: no tick at or before it fires
-- ARGV[6]        "1" to restart from the baseline even if the schedule
--                fired later (a resume skips the ticks missed while
--                paused), else the baseline applies to a new schedule only
--
-- Returns 1 if the schedule existed, else 0.

local periodic, due, fired, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local name = ARGV[2]
local existed = redis.call('HEXISTS', periodic, name)
if ARGV[1] == 'del' then
  redis.call('HDEL', periodic, name)
  redis.call('ZREM', due, name)
  redis.call('HDEL', fired, name)
  return existed
end
redis.call('HSET', periodic, name, ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', due, name)
else
  redis.call('ZADD', due, ARGV[4], name)
end
if ARGV[6] == '1' or redis.call('HEXISTS', fired, name) == 0 then
  local last = redis.call('HGET', fired, name)
  local lastTick = last and tonumber(string.match(last, '^(%d+)')) or 0
  if tonumber(ARGV[5]) > lastTick then
    redis.call('HSET', fired, name, ARGV[5] .. '|')
  end
end
redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
return existed
