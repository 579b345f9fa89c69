-- finish.lua: record the outcome of running tasks, fenced by the
-- execution that ran them, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        dead-letter stream
-- KEYS[4]        wakeup stream
-- KEYS[5]        done stream
-- KEYS[6..15]    band streams of priority 0..9
-- KEYS[15+i]     the task hash of item i (1..N), in order
-- KEYS[15+N+j]   idempotency records, referenced by index below
--
-- ARGV[1]        consumer group
-- ARGV[2]        retention of finished tasks, ms
-- ARGV[3]        idempotency window, ms
-- ARGV[4]        worker id
-- ARGV[5]        N; then 8 values per item:
--                task id, idempotency key index (0 = none), band, entry id,
--                run (the fence), outcome, text (result or error), history
--                prefix "<start ms>|" (the run's start as start.lua recorded it),
--                and for a retry the delay ms after a "/" in the outcome
--                ("retry/1500")
--
-- Outcomes (the caller has decided retry versus dead from the attempts):
--   ok      SUCCEEDED with result text
--   retry   a retryable failure: SCHEDULED again after the delay
--   dead    a permanent failure, or attempts exhausted: DEAD
--   cancel  the handler stopped because the task was cancelled: CANCELLED
-- A task whose cancellation was requested while it ran ends CANCELLED
-- whatever the outcome, with error "cancelled" (a handler's result is kept
-- as its result).
--
-- An item acts only if the task is RUNNING with exactly that run: a stale
-- worker (its task reclaimed and restarted elsewhere, or cancelled) changes
-- nothing. An acting item records the execution in history field h<run>
-- ("start|end|worker|outcome|error": the end of the latest execution is the
-- task's finish time); copies the task's fields from its band entry into
-- its hash if it was born as that entry (the entry goes now); acknowledges
-- and deletes the entry; sets a SUCCEEDED or CANCELLED task to expire after
-- the retention and lists it in the done stream (trimmed here to the
-- retention); dead-letters a DEAD one (which does not expire; the stream is
-- capped by the scheduler, records with it); and extends the idempotency
-- record to the window.
--
-- An item whose execution's outcome is recorded already (the task is no
-- longer RUNNING, but its run is still this one and its history has the
-- run) changes nothing and answers the task's status: recording an outcome
-- again is harmless. (A reclaim moves the run on, so a stale execution
-- never matches.)
--
-- Returns one value per item: the new status (or the recorded one), or ""
-- when stale. (The caller publishes the lifecycle events.)

local info, schedule, dlq, wakeup, done = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local group = ARGV[1]
local retention, window, worker = ARGV[2], ARGV[3], ARGV[4]
local n = tonumber(ARGV[5])

local now, nowS = now_ms()

local out = {}
local retried, succeeded, deadN, cancelled, listed = 0, 0, 0, 0, 0
local acks = {}
for i = 0, n - 1 do
  local a = 6 + i * 8
  local id, tk, ik = ARGV[a], KEYS[16 + i], tonumber(ARGV[a + 1])
  local p, eid, run = ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local outcome, text, prefix = ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
  local band = KEYS[6 + tonumber(p)]
  local f = redis.call('HMGET', tk, 'status', 'run', 'cancel', 'type')
  local res = ''
  if f[1] == 'RUNNING' and f[2] == run then
    local delay
    if f[3] == '1' then
      -- cancelled while it ran: CANCELLED whatever the handler returned; a
      -- result is kept as the result, never as the error
      if outcome == 'ok' then redis.call('HSET', tk, 'result', text) end
      if outcome ~= 'cancel' then text = 'cancelled' end
      outcome = 'cancel'
    elseif string.byte(outcome, 1) == 114 then -- 'r': "retry/<delay>"
      delay = string.sub(outcome, 7) -- (two statements: the embedded
      outcome = 'retry'              -- backend's Lua assigns in order)
    end
    if not f[4] then copy_spec(tk, band, eid, p) end
    local errText = ''
    if outcome ~= 'ok' then errText = text end
    local hist = prefix .. nowS .. '|' .. worker .. '|' .. outcome .. '|' .. errText
    if outcome == 'ok' then
      res = 'SUCCEEDED'
      redis.call('HSET', tk, 'status', res, 'result', text, 'h' .. run, hist)
      redis.call('PEXPIRE', tk, retention)
      redis.call('XADD', done, '*', 'i', id)
      succeeded, listed = succeeded + 1, listed + 1
    elseif outcome == 'retry' then
      res = 'SCHEDULED'
      local due = string.format('%d', now + tonumber(delay))
      redis.call('HSET', tk, 'status', res, 'error', text, 'due', due, 'h' .. run, hist)
      redis.call('ZADD', schedule, due, id)
      retried = retried + 1
    elseif outcome == 'dead' then
      res = 'DEAD'
      local did = redis.call('XADD', dlq, '*', 'i', id, 'r', text)
      redis.call('HSET', tk, 'status', res, 'error', text, 'dead_id', did, 'h' .. run, hist)
      deadN = deadN + 1
    else
      res = 'CANCELLED'
      redis.call('HSET', tk, 'status', res, 'error', text, 'h' .. run, hist)
      redis.call('PEXPIRE', tk, retention)
      redis.call('XADD', done, '*', 'i', id)
      cancelled, listed = cancelled + 1, listed + 1
    end
    if ik > 0 and res ~= 'SCHEDULED' then redis.call('PEXPIRE', KEYS[ik], window) end
    local ids = acks[p]
    if not ids then ids = {}; acks[p] = ids end
    ids[#ids + 1] = eid
  elseif f[2] == run and f[1] ~= 'RUNNING' and redis.call('HEXISTS', tk, 'h' .. run) == 1 then
    -- this execution's outcome, recorded already (a durable worker records
    -- it again until the replicas have it): the status, nothing changed
    res = f[1]
  end
  out[#out + 1] = res
end

for p, ids in pairs(acks) do
  local band = KEYS[6 + tonumber(p)]
  redis.call('XACK', band, group, unpack(ids))
  redis.call('XDEL', band, unpack(ids))
end
if listed > 0 then
  redis.call('XTRIM', done, 'MINID', string.format('%d', now - tonumber(retention)))
end
if succeeded > 0 then redis.call('HINCRBY', info, 'succeeded', succeeded) end
if deadN > 0 then redis.call('HINCRBY', info, 'dead', deadN) end
if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
if retried > 0 then
  redis.call('HINCRBY', info, 'retried', retried)
  redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
end
return out
