-- finish.lua: record the outcome of running tasks, fenced by the
-- execution that ran them, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        dead-letter stream
-- KEYS[4]        wakeup stream
-- KEYS[5..14]    band streams of priority 0..9
-- KEYS[15..]     task hashes and idempotency records, referenced by index below
--
-- ARGV[1]        consumer group
-- ARGV[2]        events channel
-- ARGV[3]        retention of finished tasks, ms
-- ARGV[4]        idempotency window, ms
-- ARGV[5]        dead-letter stream max length (approximate)
-- ARGV[6]        N; then 10 values per item:
--                task id, task key index, idempotency key index (0 = none), band,
--                entry id, run (the fence), outcome, text (result or error),
--                retry delay ms, worker
--
-- Outcomes:
--   ok      SUCCEEDED with result text
--   retry   a retryable failure: SCHEDULED again after the delay if attempts
--           remain (attempt < max attempts), else DEAD
--   dead    a permanent failure: DEAD
--   cancel  the handler stopped because the task was cancelled: CANCELLED
-- A task whose cancellation was requested while it ran ends CANCELLED
-- whatever the outcome.
--
-- An item acts only if the task is RUNNING with exactly that run: a stale
-- worker (its task reclaimed and restarted elsewhere, or cancelled) changes
-- nothing. An acting item records the execution in history field h<run>
-- ("start|end|worker|outcome|error"), acknowledges and deletes its band
-- entry, sets the finished task to expire after the retention (DEAD tasks do
-- not expire), and extends the idempotency record to the window.
--
-- Returns one status per item: the new status, or "" when stale.

local info, schedule, dlq, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local group, channel = ARGV[1], ARGV[2]
local retention, window, dlqMax = ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local out, events = {}, {}
local finished, retried, succeeded, deadN, cancelled = 0, 0, 0, 0, 0
local acks = {}
for i = 0, n - 1 do
  local a = 7 + i * 10
  local id, tk, ik = ARGV[a], KEYS[tonumber(ARGV[a + 1])], tonumber(ARGV[a + 2])
  local p, eid, run = tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5]
  local outcome, text, delay, worker = ARGV[a + 6], ARGV[a + 7], tonumber(ARGV[a + 8]), ARGV[a + 9]
  local f = redis.call('HMGET', tk, 'status', 'run', 'cancel', 'type', 'attempt', 'max_att', 'prio', 'started')
  local res = ''
  if f[1] == 'RUNNING' and f[2] == run then
    local attempt = tonumber(f[5])
    if f[3] == '1' then outcome = 'cancel' end
    if outcome == 'retry' and attempt >= tonumber(f[6]) then outcome = 'dead' end
    local errText = ''
    if outcome ~= 'ok' then errText = text end
    redis.call('HSET', tk, 'h' .. run, f[8] .. '|' .. now .. '|' .. worker .. '|' .. outcome .. '|' .. errText)
    if outcome == 'ok' then
      res = 'SUCCEEDED'
      redis.call('HSET', tk, 'status', res, 'result', text, 'finished', now)
      redis.call('PEXPIRE', tk, retention)
      succeeded = succeeded + 1
    elseif outcome == 'retry' then
      res = 'SCHEDULED'
      redis.call('HSET', tk, 'status', res, 'error', text, 'due', now + delay)
      redis.call('ZADD', schedule, now + delay, id)
      retried = retried + 1
    elseif outcome == 'dead' then
      res = 'DEAD'
      local did = redis.call('XADD', dlq, 'MAXLEN', '~', dlqMax, '*', 'i', id, 'r', text)
      redis.call('HSET', tk, 'status', res, 'error', text, 'finished', now, 'dead_id', did)
      deadN = deadN + 1
    else
      res = 'CANCELLED'
      redis.call('HSET', tk, 'status', res, 'error', text, 'finished', now)
      redis.call('PEXPIRE', tk, retention)
      cancelled = cancelled + 1
    end
    if res ~= 'SCHEDULED' then
      finished = finished + 1
      if ik > 0 then redis.call('PEXPIRE', KEYS[ik], window) end
    end
    local ids = acks[p]
    if not ids then ids = {}; acks[p] = ids end
    ids[#ids + 1] = eid
    local ev = id .. '\t' .. res .. '\t' .. f[4] .. '\t' .. attempt .. '\t' .. f[7] .. '\t' .. now
    if errText ~= '' then ev = ev .. '\t' .. string.gsub(errText, '[\t\n]', ' ') end
    events[#events + 1] = ev
  end
  out[#out + 1] = res
end

for p, ids in pairs(acks) do
  redis.call('XACK', KEYS[5 + p], group, unpack(ids))
  redis.call('XDEL', KEYS[5 + p], unpack(ids))
end
if finished + retried > 0 then
  redis.call('HINCRBY', info, 'running', -(finished + retried))
  if finished > 0 then redis.call('HINCRBY', info, 'depth', -finished) end
  if succeeded > 0 then redis.call('HINCRBY', info, 'succeeded', succeeded) end
  if deadN > 0 then redis.call('HINCRBY', info, 'dead', deadN) end
  if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
  if retried > 0 then
    redis.call('HINCRBY', info, 'retried', retried)
    redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
  end
  redis.call('PUBLISH', channel, table.concat(events, '\n'))
end
return out
