-- signal.lua: deliver a signal to a task (dtq.Client.Signal): recorded
-- as the step record of its name, for the task's wait of that name
-- (dtq.WaitFor) — now or later.
--
-- KEYS[1]        the task hash
-- KEYS[2]        the task's steps hash (Keys.Steps)
-- KEYS[3]        finished hash (packed records, by ULID)
-- KEYS[4]        the band stream of its birth entry (any band when the id
--                names no entry)
-- KEYS[5]        schedule zset
-- KEYS[6]        wakeup stream (the scheduler re-reads the earliest due time)
-- KEYS[7]        suspended zset (Keys.Suspended)
-- KEYS[8]        oindex hash (the ordered tasks without a hash)
--
-- ARGV[1]        the task's ULID
-- ARGV[2]        the signal's name
-- ARGV[3]        its payload (JSON)
-- ARGV[4]        its birth entry's id ("" when the id names no entry)
-- ARGV[5]        the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[6]        how long the step records are kept at least, ms
--
-- A task not finished gets the record "s|<Redis ms>|<payload>" unless its
-- steps hold one of that name already (the first record stands: a second
-- signal, or the wait's timeout, promote.lua, came first). A task
-- SCHEDULED waiting for this signal is due at once.
--
-- Returns {'OK', status} when recorded, {'HAD', status} when a record of
-- that name was there, {'FINISHED', status} for a finished task (nothing
-- recorded), {'NOTFOUND'} for none.

local tk, steps, fin, band, schedule, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local ulid, name, payload, eid, queue, keep = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])

local f = redis.call('HMGET', tk, 'status', 'wait')
local status = f[1]
if not status then
  local rec = record_status(redis.call('HGET', fin, ulid))
  if rec then return {'FINISHED', rec} end
  local m = eid ~= '' and entry_fields(band, eid)
  if (not m or m['i']) and redis.call('HEXISTS', KEYS[8], ulid) == 0 then return {'NOTFOUND'} end
  status = 'QUEUED' -- born as its entry, or an ordered task without a hash (lib_order.lua): queued, or running
end
if status == 'SUCCEEDED' or status == 'DEAD' or status == 'CANCELLED' then return {'FINISHED', status} end
local now, nowS = now_ms()
if redis.call('HSETNX', steps, name, 's|' .. nowS .. '|' .. payload) == 0 then return {'HAD', status} end
local ttl = redis.call('PTTL', steps)
if ttl < keep then redis.call('PEXPIRE', steps, keep) end
if status == 'SCHEDULED' and f[2] == 'signal ' .. name then
  local due = string.format('%d', now)
  redis.call('HSET', tk, 'due', due)
  redis.call('ZADD', schedule, due, queue .. '-' .. ulid)
  redis.call('ZADD', KEYS[7], 'XX', due, queue .. '-' .. ulid)
  redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
end
return {'OK', status}
