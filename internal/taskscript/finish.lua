-- finish.lua: record the outcome of running tasks, fenced by the
-- execution that ran them, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        dead-letter stream
-- KEYS[4]        wakeup stream
-- KEYS[5..14]    band streams of priority 0..9
-- KEYS[14+i]     the task hash of item i (1..N), in order
-- KEYS[14+N+j]   idempotency records, referenced by index below
--
-- ARGV[1]        consumer group
-- ARGV[2]        retention of finished tasks, ms
-- ARGV[3]        idempotency window, ms
-- ARGV[4]        dead-letter stream max length (approximate)
-- ARGV[5]        worker id
-- ARGV[6]        N; then 8 values per item:
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
-- task's finish time), acknowledges its band entry, sets the
-- finished task to expire after the retention (DEAD tasks do not expire),
-- and extends the idempotency record to the window.
--
-- Acknowledged entries leave their band by trimming: every entry older than
-- the band's oldest pending one has been acknowledged (it was delivered,
-- and is no longer pending), so XTRIM MINID removes them in one sweep. If a
-- long-running task holds the trim back and over 2048 acknowledged entries
-- pile up behind it, this batch's entries are deleted one by one instead.
--
-- An item whose execution's outcome is recorded already (the task is no
-- longer RUNNING, but its run is still this one and its history has the
-- run) changes nothing and answers the task's status: recording an outcome
-- again is harmless. (A reclaim moves the run on, so a stale execution
-- never matches.)
--
-- Returns one value per item: the new status (or the recorded one), or ""
-- when stale. (The caller publishes the lifecycle events.)

local info, schedule, dlq, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local group = ARGV[1]
local retention, window, dlqMax, worker = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowS = string.format('%d', now)

local out = {}
local retried, succeeded, deadN, cancelled = 0, 0, 0, 0
local acks = {}
for i = 0, n - 1 do
  local a = 7 + i * 8
  local id, tk, ik = ARGV[a], KEYS[15 + i], tonumber(ARGV[a + 1])
  local p, eid, run = ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local outcome, text, prefix = ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
  local f = redis.call('HMGET', tk, 'status', 'run', 'cancel')
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
    local errText = ''
    if outcome ~= 'ok' then errText = text end
    local hist = prefix .. nowS .. '|' .. worker .. '|' .. outcome .. '|' .. errText
    if outcome == 'ok' then
      res = 'SUCCEEDED'
      redis.call('HSET', tk, 'status', res, 'result', text, 'h' .. run, hist)
      redis.call('PEXPIRE', tk, retention)
      succeeded = succeeded + 1
    elseif outcome == 'retry' then
      res = 'SCHEDULED'
      local due = string.format('%d', now + tonumber(delay))
      redis.call('HSET', tk, 'status', res, 'error', text, 'due', due, 'h' .. run, hist)
      redis.call('ZADD', schedule, due, id)
      retried = retried + 1
    elseif outcome == 'dead' then
      res = 'DEAD'
      local did = redis.call('XADD', dlq, 'MAXLEN', '~', dlqMax, '*', 'i', id, 'r', text)
      redis.call('HSET', tk, 'status', res, 'error', text, 'dead_id', did, 'h' .. run, hist)
      deadN = deadN + 1
    else
      res = 'CANCELLED'
      redis.call('HSET', tk, 'status', res, 'error', text, 'h' .. run, hist)
      redis.call('PEXPIRE', tk, retention)
      cancelled = cancelled + 1
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
  local band = KEYS[5 + tonumber(p)]
  redis.call('XACK', band, group, unpack(ids))
  local pend = redis.call('XPENDING', band, group)
  if pend[1] > 0 then
    local behind = redis.call('XLEN', band) - pend[1] - tonumber(redis.call('HGET', info, 'q' .. p) or '0')
    if behind > 2048 then
      redis.call('XDEL', band, unpack(ids))
    end
    redis.call('XTRIM', band, 'MINID', pend[2])
  else
    -- nothing pending: every delivered entry is acknowledged
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', band)) do
      local name, last
      for j = 1, #g, 2 do
        if g[j] == 'name' then name = g[j + 1] elseif g[j] == 'last-delivered-id' then last = g[j + 1] end
      end
      if name == group and last then
        local ms, seq = string.match(last, '^(%d+)-(%d+)$')
        redis.call('XTRIM', band, 'MINID', ms .. '-' .. string.format('%d', tonumber(seq) + 1))
      end
    end
  end
end
local done = succeeded + deadN + cancelled
if done + retried > 0 then
  redis.call('HINCRBY', info, 'running', -(done + retried))
  if done > 0 then redis.call('HINCRBY', info, 'depth', -done) end
  if succeeded > 0 then redis.call('HINCRBY', info, 'succeeded', succeeded) end
  if deadN > 0 then redis.call('HINCRBY', info, 'dead', deadN) end
  if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
  if retried > 0 then
    redis.call('HINCRBY', info, 'retried', retried)
    redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
  end
end
return out
