-- unique.lua: create one unique task — one that no other task of its
-- unique lock holds while that task is in the lock's states.
--
-- KEYS[1]        uniq hash (lock -> holder task id)
-- KEYS[2]        the holder's task hash as the caller read it (the new
--                task's own hash when the lock was free)
-- KEYS[3]        schedule zset
-- KEYS[4]        wakeup stream
-- KEYS[5..14]    band streams of priority 0..9
-- KEYS[15]       the new task's hash
-- KEYS[16]       gwait zset (tasks waiting for their group's turn)
-- KEYS[17]       gcount hash (per group: admitted entries not started)
--
-- ARGV[1]        lock (hex); with a period, the field is "<lock>@<bucket>",
--                bucket the Redis clock floored to the period (Unix ms)
-- ARGV[2]        the holder the caller expects ("" for none: the first
--                call; KEYS[2] then names the new task's own hash)
-- ARGV[3]        the lock's states: a string of status initials (Q queued,
--                S scheduled, R running, D dead, U succeeded, C cancelled)
-- ARGV[4]        the new task's id
-- ARGV[5..9]     type, payload, priority, max attempts, timeout ms
-- ARGV[10]       due time, Unix ms ("0": due now), or
-- ARGV[11]       delay ms ("0": none)
-- ARGV[12]       period ms ("0": none)
-- ARGV[13]       group ("": none; a grouped task due now enters its band
--                under its group's window, or waits in gwait)
-- ARGV[14]       limit key ("": none)
-- ARGV[15]       the submission's W3C traceparent ("": none)
--
-- A unique task always has a hash (its status field says whether it still
-- holds its lock): status QUEUED and an entry in its band, or SCHEDULED in
-- the schedule. The holder holds the lock while its status is in the
-- states; a holder gone (expired, deleted), discarded from the dead-letter
-- stream, or out of them does not: the lock goes to the new task.
--
-- Returns { code, id, now }: 1 created (id the new task, SCHEDULED when
-- due later: code 3, waiting for its group's turn: code 4), 2 duplicate (id the holder), 0 the lock has another
-- holder than expected: id (call again with its hash in KEYS[2]). A free
-- lock takes one call.

local uniq, holderKey, schedule, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local lock, expected, states = ARGV[1], ARGV[2], ARGV[3]
local now, nowS = now_ms()
local period = tonumber(ARGV[12])
if period > 0 then lock = lock .. '@' .. string.format('%d', now - now % period) end

local holder = redis.call('HGET', uniq, lock) or ''
if holder ~= expected then return { 0, holder, nowS } end
if holder ~= '' then
  -- a discarded DEAD task has left the dead-letter stream: it holds no lock
  local f = redis.call('HMGET', holderKey, 'status', 'discarded')
  local initial = { QUEUED = 'Q', SCHEDULED = 'S', RUNNING = 'R', DEAD = 'D', SUCCEEDED = 'U', CANCELLED = 'C' }
  local st = f[1]
  if st == 'DEAD' and f[2] then st = nil end
  if st and string.find(states, initial[st] or '?', 1, true) then
    return { 2, holder, nowS }
  end
end

local id, tk = ARGV[4], KEYS[15]
local typ, payload, prio, maxAtt, timeout = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local due = tonumber(ARGV[10])
if ARGV[11] ~= '0' then due = now + tonumber(ARGV[11]) end
local code = 1
if ARGV[15] ~= '' then redis.call('HSET', tk, 'trace', ARGV[15]) end
if due > now then
  local dueS = string.format('%d', due)
  redis.call('HSET', tk, 'type', typ, 'payload', payload, 'prio', prio, 'status', 'SCHEDULED', 'max_att', maxAtt,
    'timeout', timeout, 'created', nowS, 'due', dueS, 'uniq', lock)
  if ARGV[13] ~= '' then redis.call('HSET', tk, 'group', ARGV[13]) end
  if ARGV[14] ~= '' then redis.call('HSET', tk, 'lkey', ARGV[14]) end
  redis.call('ZADD', schedule, dueS, id)
  redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
  code = 3
else
  redis.call('HSET', tk, 'type', typ, 'payload', payload, 'prio', prio, 'status', 'QUEUED', 'max_att', maxAtt,
    'timeout', timeout, 'created', nowS, 'uniq', lock)
  if ARGV[14] ~= '' then redis.call('HSET', tk, 'lkey', ARGV[14]) end
  if ARGV[13] ~= '' then
    redis.call('HSET', tk, 'group', ARGV[13])
    if not admit(KEYS[5 + tonumber(prio)], tk, id, ARGV[13], prio, KEYS[16], KEYS[17]) then code = 4 end
  else
    readd(KEYS[5 + tonumber(prio)], tk, id)
  end
end
redis.call('HSET', uniq, lock, id)
return { code, id, nowS }
