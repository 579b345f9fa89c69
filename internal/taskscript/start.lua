-- start.lua: start claimed tasks — QUEUED -> RUNNING — or resolve why
-- not, for one worker, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        dead-letter stream
-- KEYS[3..12]    band streams of priority 0..9
-- KEYS[13..]     the task hash of each entry, in order
--
-- ARGV[1]        consumer group
-- ARGV[2]        worker id
-- ARGV[3]        max crashes: reclaims of a RUNNING task (its worker died)
--                tolerated before it goes DEAD
-- ARGV[4]        events channel (for tasks that go DEAD here)
-- ARGV[5]        dead-letter stream max length (approximate)
-- ARGV[6]        retention of finished tasks, ms
-- ARGV[7]        N; then 4 values per entry: band, entry id, task id, mode:
--                0 new delivery, 1 reclaimed from a lost worker, 2 give back
--                (claimed beyond the worker's free slots: a QUEUED task's entry
--                goes back to the tail of its band, unstarted)
--
-- Per entry:
--   QUEUED                    -> RUNNING: attempt + 1, run + 1 (run is the
--                                execution number: the fence of this start)
--   RUNNING and reclaimed     -> its worker died: crashes + 1, and either
--                                CANCELLED when its cancellation was
--                                requested (no new execution starts),
--                                RUNNING again (run + 1, same attempt) or,
--                                past max crashes, DEAD
--   queue paused, or give back -> the entry goes back to the tail of its band
--   anything else (finished, cancelled, scheduled, gone, or a duplicate
--   delivery after a lost consumer group) -> the entry is acknowledged and
--   deleted, and skipped
--
-- Returns 4 values per entry — code, run, attempt, crashes — then the start
-- time (Unix ms) of the started ones. Code is 1 when started (the caller reads the task's other fields
-- itself and publishes the RUNNING event), 0 when skipped, -1 when it went
-- DEAD, -2 when it went CANCELLED (events of both published here). The band
-- an entry came from is its task's priority.

local info, dlq = KEYS[1], KEYS[2]
local group, worker = ARGV[1], ARGV[2]
local maxCrashes = tonumber(ARGV[3])
local channel, dlqMax, retention = ARGV[4], ARGV[5], ARGV[6]
local n = tonumber(ARGV[7])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- readd appends task id's entry to band from its hash (type, payload, max
-- attempts, timeout, created, idempotency hash), as enqueue writes it.
local function readd(band, tk, id)
  local s = redis.call('HMGET', tk, 'type', 'payload', 'max_att', 'timeout', 'created', 'idem')
  if s[6] then
    redis.call('XADD', band, '*', 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5], 'k', s[6])
  else
    redis.call('XADD', band, '*', 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5])
  end
end
local nowS = string.format('%d', now)
local paused = redis.call('HGET', info, 'paused') == '1'

local out, events = {}, {}
local startedBy, dead, cancelled = {}, 0, 0
for i = 0, n - 1 do
  local a = 8 + i * 4
  local band = KEYS[3 + tonumber(ARGV[a])]
  local eid, id, mode = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local tk = KEYS[13 + i]
  local prio = ARGV[a]
  local f = redis.call('HMGET', tk, 'status', 'run', 'attempt', 'crashes', 'cancel')
  local status = f[1]
  local code, run, attempt, crashes = 0, '', '', ''
  if status == 'QUEUED' and (paused or mode == '2') then
    redis.call('XACK', band, group, eid)
    redis.call('XDEL', band, eid)
    readd(band, tk, id)
  elseif status == 'QUEUED' or (status == 'RUNNING' and mode == '1') then
    run = tostring(tonumber(f[2] or '0') + 1)
    attempt, crashes = f[3] or '0', f[4] or '0'
    if status == 'QUEUED' then
      attempt = tostring(tonumber(attempt) + 1)
      startedBy[prio] = (startedBy[prio] or 0) + 1
    else
      -- the previous execution's worker died: record it, count it
      crashes = tostring(tonumber(crashes) + 1)
      local prev = redis.call('HMGET', tk, 'started', 'worker')
      redis.call('HSET', tk, 'h' .. f[2], (prev[1] or '') .. '|' .. nowS .. '|' .. (prev[2] or '') .. '|crashed|worker lost',
        'crashes', crashes)
    end
    if status == 'RUNNING' and f[5] == '1' then
      -- cancelled while its worker was lost: it ends here, unstarted
      redis.call('HSET', tk, 'status', 'CANCELLED', 'error', 'cancelled', 'finished', nowS)
      redis.call('PEXPIRE', tk, retention)
      redis.call('XACK', band, group, eid)
      redis.call('XDEL', band, eid)
      cancelled = cancelled + 1
      code = -2
      local typ = redis.call('HGET', tk, 'type')
      events[#events + 1] = id .. '\tCANCELLED\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS
    elseif tonumber(crashes) > maxCrashes then
      local reason = 'crashed ' .. crashes .. ' times (worker lost mid-run)'
      local did = redis.call('XADD', dlq, 'MAXLEN', '~', dlqMax, '*', 'i', id, 'r', reason)
      redis.call('HSET', tk, 'status', 'DEAD', 'crashes', crashes, 'error', reason, 'finished', nowS, 'dead_id', did)
      redis.call('XACK', band, group, eid)
      redis.call('XDEL', band, eid)
      dead = dead + 1
      code = -1
      local typ = redis.call('HGET', tk, 'type')
      events[#events + 1] = id .. '\tDEAD\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS .. '\t' .. reason
    else
      redis.call('HSET', tk, 'status', 'RUNNING', 'run', run, 'attempt', attempt, 'started', nowS, 'worker', worker)
      code = 1
    end
  elseif status == 'RUNNING' then
    -- a duplicate delivery (the group was lost and recreated): the running
    -- execution keeps it
  else
    redis.call('XACK', band, group, eid)
    redis.call('XDEL', band, eid)
  end
  out[#out + 1] = code
  out[#out + 1] = run
  out[#out + 1] = attempt
  out[#out + 1] = crashes
end
out[#out + 1] = nowS

local startedN = 0
for p, c in pairs(startedBy) do
  redis.call('HINCRBY', info, 'q' .. p, -c)
  startedN = startedN + c
end
if startedN > 0 then redis.call('HINCRBY', info, 'running', startedN) end
if dead + cancelled > 0 then
  redis.call('HINCRBY', info, 'running', -(dead + cancelled))
  redis.call('HINCRBY', info, 'depth', -(dead + cancelled))
  if dead > 0 then redis.call('HINCRBY', info, 'dead', dead) end
  if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
  redis.call('PUBLISH', channel, table.concat(events, '\n'))
end
return out
