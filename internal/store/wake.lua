-- wake.lua: wake a task awaiting a child (dtq.Child) whose end was
-- recorded: due at once, if it is suspended waiting for that child.
--
-- KEYS[1]        the awaiting task's hash
-- KEYS[2]        schedule zset
-- KEYS[3]        suspended zset (Keys.Suspended)
-- KEYS[4]        wakeup stream (the scheduler re-reads the earliest due time)
--
-- ARGV[1]        the awaiting task's id
-- ARGV[2]        what it waits for: "child <step>"
--
-- A task not suspended for that child (running still: it checks the child
-- itself; or waiting for something else) is left as it is.
--
-- Returns 1 when woken, 0 otherwise.

local f = redis.call('HMGET', KEYS[1], 'status', 'wait')
if f[1] ~= 'SCHEDULED' or f[2] ~= ARGV[2] then return 0 end
local _, nowS = now_ms()
redis.call('HSET', KEYS[1], 'due', nowS)
redis.call('ZADD', KEYS[2], nowS, ARGV[1])
redis.call('ZADD', KEYS[3], 'XX', nowS, ARGV[1])
redis.call('XADD', KEYS[4], 'MAXLEN', '1', '*', 'w', '1')
return 1
