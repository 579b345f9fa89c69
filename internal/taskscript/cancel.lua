-- cancel.lua: cancel one task.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        the task hash
--
-- ARGV[1]        task id
-- ARGV[2]        events channel
-- ARGV[3]        cancels channel (workers listen)
-- ARGV[4]        retention of finished tasks, ms
--
-- QUEUED or SCHEDULED -> CANCELLED at once (a QUEUED task's band entry is
-- skipped when a worker reads it). RUNNING -> the cancellation is recorded
-- ("cancel" = 1) and published on the cancels channel; the worker running it
-- cancels its handler, and the task ends CANCELLED. Anything else is left
-- as it is.
--
-- Returns { the task's status after the call ("" when there is no such
-- task) } or, when this call cancelled a QUEUED or SCHEDULED task,
-- { 'CANCELLED', its type }.

local info, schedule, tk = KEYS[1], KEYS[2], KEYS[3]
local id, channel, cancels, retention = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local f = redis.call('HMGET', tk, 'status', 'type', 'attempt', 'prio')
f[3] = f[3] or '0'
local status = f[1]
if not status then return {''} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

if status == 'QUEUED' or status == 'SCHEDULED' then
  if status == 'QUEUED' then
    redis.call('HINCRBY', info, 'q' .. f[4], -1)
  else
    redis.call('ZREM', schedule, id)
  end
  redis.call('HSET', tk, 'status', 'CANCELLED', 'finished', string.format('%d', now), 'error', 'cancelled')
  redis.call('PEXPIRE', tk, retention)
  redis.call('HINCRBY', info, 'depth', -1)
  redis.call('HINCRBY', info, 'cancelled', 1)
  redis.call('PUBLISH', channel, id .. '\tCANCELLED\t' .. f[2] .. '\t' .. f[3] .. '\t' .. f[4] .. '\t' .. string.format('%d', now))
  return {'CANCELLED', f[2]}
end
if status == 'RUNNING' then
  redis.call('HSET', tk, 'cancel', 1)
  redis.call('PUBLISH', cancels, id)
end
return {status}
