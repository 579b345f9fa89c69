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
-- ARGV[4]        events channel
-- ARGV[5]        dead-letter stream max length (approximate)
-- ARGV[6]        N; then 4 values per entry: band, entry id, task id, mode:
--                0 new delivery, 1 reclaimed from a lost worker, 2 give back
--                (claimed beyond the worker's free slots: a QUEUED task's entry
--                goes back to the tail of its band, unstarted)
--
-- Per entry:
--   QUEUED                    -> RUNNING: attempt + 1, run + 1 (run is the
--                                execution number: the fence of this start)
--   RUNNING and reclaimed     -> its worker died: crashes + 1, and either
--                                RUNNING again (run + 1, same attempt) or,
--                                past max crashes, DEAD
--   queue paused, or give back -> the entry goes back to the tail of its band
--   anything else (finished, cancelled, scheduled, gone, or a duplicate
--   delivery after a lost consumer group) -> the entry is acknowledged and
--   skipped
--
-- Returns one array per entry: { 1, run, attempt, max attempts, timeout ms,
-- type, payload, created ms, crashes, idempotency record hash ("" for none) }
-- when started, or { 0 } when skipped.

local info, dlq = KEYS[1], KEYS[2]
local group, worker = ARGV[1], ARGV[2]
local maxCrashes = tonumber(ARGV[3])
local channel, dlqMax = ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = redis.call('HGET', info, 'paused') == '1'

local out, events = {}, {}
local started, dead = 0, 0
for i = 0, n - 1 do
  local a = 7 + i * 4
  local band = KEYS[3 + tonumber(ARGV[a])]
  local eid, id, mode = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local reclaimed = mode == '1'
  local tk = KEYS[13 + i]
  local f = redis.call('HMGET', tk, 'status', 'run', 'attempt', 'max_att', 'timeout',
    'type', 'payload', 'created', 'crashes', 'prio', 'started', 'worker', 'idem')
  local status = f[1]
  local res = { 0 }
  if status == 'QUEUED' and (paused or mode == '2') then
    redis.call('XACK', band, group, eid)
    redis.call('XDEL', band, eid)
    redis.call('XADD', band, '*', 'i', id)
  elseif status == 'QUEUED' or (status == 'RUNNING' and reclaimed) then
    local run, attempt, crashes = tonumber(f[2]) + 1, tonumber(f[3]), tonumber(f[9])
    if status == 'QUEUED' then
      attempt = attempt + 1
      redis.call('HINCRBY', info, 'q' .. f[10], -1)
      started = started + 1
    else
      -- the previous execution's worker died: record it, count it
      crashes = crashes + 1
      redis.call('HSET', tk, 'h' .. (run - 1), f[11] .. '|' .. now .. '|' .. (f[12] or '') .. '|crashed|worker lost')
    end
    if crashes > maxCrashes then
      local reason = 'crashed ' .. crashes .. ' times (worker lost mid-run)'
      local did = redis.call('XADD', dlq, 'MAXLEN', '~', dlqMax, '*', 'i', id, 'r', reason)
      redis.call('HSET', tk, 'status', 'DEAD', 'crashes', crashes, 'error', reason, 'finished', now, 'dead_id', did)
      redis.call('XACK', band, group, eid)
      redis.call('XDEL', band, eid)
      dead = dead + 1
      events[#events + 1] = id .. '\tDEAD\t' .. f[6] .. '\t' .. attempt .. '\t' .. f[10] .. '\t' .. now .. '\t' .. reason
    else
      redis.call('HSET', tk, 'status', 'RUNNING', 'run', run, 'attempt', attempt, 'crashes', crashes,
        'started', now, 'worker', worker)
      res = { 1, run, attempt, tonumber(f[4]), tonumber(f[5]), f[6], f[7], tonumber(f[8]), crashes, f[13] or '' }
      events[#events + 1] = id .. '\tRUNNING\t' .. f[6] .. '\t' .. attempt .. '\t' .. f[10] .. '\t' .. now
    end
  elseif status == 'RUNNING' then
    -- a duplicate delivery (the group was lost and recreated): the running
    -- execution keeps it
  else
    redis.call('XACK', band, group, eid)
    redis.call('XDEL', band, eid)
  end
  out[#out + 1] = res
end

if started > 0 then redis.call('HINCRBY', info, 'running', started) end
if dead > 0 then
  redis.call('HINCRBY', info, 'running', -dead)
  redis.call('HINCRBY', info, 'depth', -dead)
  redis.call('HINCRBY', info, 'dead', dead)
end
if #events > 0 then redis.call('PUBLISH', channel, table.concat(events, '\n')) end
return out
