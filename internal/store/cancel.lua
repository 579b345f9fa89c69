-- cancel.lua: cancel one task.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        done stream (finished tasks: entries "i" = their ids)
-- KEYS[4]        run hash (running tasks' state, by ULID)
-- KEYS[5]        the task hash
-- KEYS[6]        finished hash (packed records, by ULID)
-- KEYS[7]        the band stream of its birth entry (any band when the id
--                names no entry)
-- KEYS[8]        gwait zset (tasks waiting for their group's turn)
-- KEYS[9]        limwait zset (tasks a full scoped concurrency limit holds back)
--
-- ARGV[1]        task id
-- ARGV[2]        events channel
-- ARGV[3]        cancels channel (workers listen)
-- ARGV[4]        retention of finished tasks, ms
-- ARGV[5]        consumer group
-- ARGV[6]        its birth entry's id ("" when the id names no entry)
-- ARGV[7]        its birth entry's band
-- ARGV[8]        its ULID
--
-- RUNNING (a Run field) -> the cancellation is recorded in the Run field and
-- published on the cancels channel; the worker running it cancels its
-- handler, and the task ends CANCELLED. A task born as an entry and still
-- only that (QUEUED) -> a CANCELLED hash made from the entry; the entry is
-- deleted, or, when a worker has just claimed it, its Run field says
-- withdrawn (its start then skips it). A QUEUED (with a hash) or SCHEDULED
-- task -> CANCELLED at once (a QUEUED task's entry is skipped when a worker
-- reads it; one waiting for its group's turn leaves gwait). Anything else is left as it is. A cancelled task expires after
-- the retention and is listed in the done stream.
--
-- Returns { the task's status after the call ("" when there is no such
-- task) } or, when this call cancelled a QUEUED or SCHEDULED task,
-- { 'CANCELLED', its type }.

local info, schedule, done, runs, tk, fin, band = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, channel, cancels, retention = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local group, eid, prio, ulid = ARGV[5], ARGV[6], ARGV[7], ARGV[8]

local rs = run_state(redis.call('HGET', runs, ulid))
if rs then
  if rs.cancel ~= '1' then
    rs.cancel = '1'
    redis.call('HSET', runs, ulid, run_value(rs))
    redis.call('PUBLISH', cancels, id)
  end
  return {'RUNNING'}
end
local recorded = record_status(redis.call('HGET', fin, ulid))
if recorded then return {recorded} end

local f = redis.call('HMGET', tk, 'status', 'type', 'attempt', 'prio', 'gwait', 'parked')
f[3] = f[3] or '0'
local status = f[1]
if not status then
  if eid == '' then return {''} end
  f[2] = copy_spec(tk, band, eid, prio)
  if not f[2] then return {''} end
  f[4] = prio
  local pend = redis.pcall('XPENDING', band, group, eid, eid, 1)
  if type(pend) ~= 'table' or pend.err or #pend == 0 then
    redis.call('XDEL', band, eid)
  else
    redis.call('HSET', runs, ulid, 'C') -- claimed, not started: withdrawn
  end
  status = 'QUEUED'
end

local now, nowS = now_ms()

if status == 'QUEUED' or status == 'SCHEDULED' then
  if status == 'SCHEDULED' then
    redis.call('ZREM', schedule, id)
  end
  if f[5] then
    redis.call('ZREM', KEYS[8], f[5])
    redis.call('HDEL', tk, 'gwait')
  end
  if f[6] then
    redis.call('ZREM', KEYS[9], f[6])
    redis.call('HDEL', tk, 'parked')
  end
  redis.call('HSET', tk, 'status', 'CANCELLED', 'finished', nowS, 'error', 'cancelled')
  redis.call('PEXPIRE', tk, retention)
  list_done(info, done, {id})
  redis.call('HINCRBY', info, 'cancelled', 1)
  redis.call('PUBLISH', channel, id .. '\tCANCELLED\t' .. f[2] .. '\t' .. f[3] .. '\t' .. f[4] .. '\t' .. nowS)
  return {'CANCELLED', f[2]}
end
return {status}
