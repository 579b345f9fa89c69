-- start.lua: start claimed tasks — QUEUED -> RUNNING — or resolve why
-- not, for one worker, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        dead-letter stream
-- KEYS[3]        done stream
-- KEYS[4..13]    band streams of priority 0..9
-- KEYS[14..]     the task hash of each entry, in order
--
-- ARGV[1]        consumer group
-- ARGV[2]        worker id
-- ARGV[3]        max crashes: reclaims of a RUNNING task (its worker died)
--                tolerated before it goes DEAD
-- ARGV[4]        events channel (for tasks that end here)
-- ARGV[5]        retention of finished tasks, ms
-- ARGV[6]        N; then 5 values per entry: band, entry id, task id, born
--                (1: the task was born as this entry, which carries no "i";
--                0: an entry written again for a task with a hash), mode:
--                0 new delivery, 1 reclaimed from a lost worker, 2 give back
--                (claimed beyond the worker's free slots: a QUEUED task's
--                entry goes back to the tail of its band, unstarted),
--                3 malformed (neither a task's birth entry nor an entry
--                written again: dead-lettered)
--
-- Per entry:
--   born, no hash (QUEUED)    -> RUNNING: a hash with the run's state; the
--                                task's fields stay in the entry
--   QUEUED (a hash)           -> RUNNING: attempt + 1, run + 1 (run is the
--                                execution number: the fence of this start)
--   RUNNING and reclaimed     -> its worker died: crashes + 1, and either
--                                CANCELLED when its cancellation was
--                                requested (no new execution starts),
--                                RUNNING again (run + 1, same attempt) or,
--                                past max crashes, DEAD
--   queue paused, or give back -> the entry goes back to the tail of its band
--                                (a born task gets a hash: its id names the
--                                entry it leaves)
--   malformed                 -> a DEAD record with the entry's fields as its
--                                error, dead-lettered; the entry is deleted
--   anything else (finished, cancelled, scheduled, gone, or a duplicate
--   delivery after a lost consumer group) -> the entry is acknowledged and
--   deleted (a running task's duplicate is left to its execution), skipped
--
-- Returns 4 values per entry — code, run, attempt, crashes — then the start
-- time (Unix ms). Code is 1 when started (the caller publishes the RUNNING
-- event), 0 when skipped, -1 when it went DEAD, -2 when it went CANCELLED
-- (events of both published here). The band an entry came from is its
-- task's priority.

local info, dlq, done = KEYS[1], KEYS[2], KEYS[3]
local group, worker = ARGV[1], ARGV[2]
local maxCrashes = tonumber(ARGV[3])
local channel, retention = ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])

local now, nowS = now_ms()
local paused = redis.call('HGET', info, 'paused') == '1'

local out, events = {}, {}
local dead, cancelled = 0, 0
for i = 0, n - 1 do
  local a = 7 + i * 5
  local prio = ARGV[a]
  local band = KEYS[4 + tonumber(prio)]
  local eid, id, born, mode = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3] == '1', ARGV[a + 4]
  local tk = KEYS[14 + i]
  local f = redis.call('HMGET', tk, 'status', 'run', 'attempt', 'crashes', 'cancel', 'type')
  local status = f[1]
  if not status and born then status = 'QUEUED' end
  local code, run, attempt, crashes = 0, '', '', ''
  if mode == '3' then
    local m = entry_fields(band, eid) or {}
    local parts = {}
    for k, v in pairs(m) do parts[#parts + 1] = k .. '=' .. string.sub(v, 1, 64) end
    local reason = 'malformed band entry ' .. eid .. ': ' .. table.concat(parts, ' ')
    local did = redis.call('XADD', dlq, '*', 'i', id, 'r', reason)
    redis.call('HSET', tk, 'type', '', 'payload', 'null', 'prio', prio, 'status', 'DEAD', 'max_att', '0', 'timeout', '0',
      'created', string.match(eid, '^(%d+)-'), 'error', reason, 'finished', nowS, 'dead_id', did)
    ack_del(band, group, eid)
    dead = dead + 1
    code = -1
    events[#events + 1] = id .. '\tDEAD\t\t0\t' .. prio .. '\t' .. nowS .. '\t' .. reason
  elseif status == 'QUEUED' and (paused or mode == '2') then
    if not f[6] then copy_spec(tk, band, eid, prio) end
    redis.call('HSET', tk, 'status', 'QUEUED')
    ack_del(band, group, eid)
    readd(band, tk, id)
  elseif status == 'QUEUED' or (status == 'RUNNING' and mode == '1') then
    run = tostring(tonumber(f[2] or '0') + 1)
    attempt, crashes = f[3] or '0', f[4] or '0'
    if status == 'QUEUED' then
      attempt = tostring(tonumber(attempt) + 1)
    else
      -- the previous execution's worker died: record it, count it
      crashes = tostring(tonumber(crashes) + 1)
      local prev = redis.call('HMGET', tk, 'started', 'worker')
      redis.call('HSET', tk, 'h' .. f[2], (prev[1] or '') .. '|' .. nowS .. '|' .. (prev[2] or '') .. '|crashed|worker lost',
        'crashes', crashes)
    end
    if status == 'RUNNING' and f[5] == '1' then
      -- cancelled while its worker was lost: it ends here, unstarted
      local typ = f[6] or copy_spec(tk, band, eid, prio) or ''
      redis.call('HSET', tk, 'status', 'CANCELLED', 'error', 'cancelled', 'finished', nowS)
      redis.call('PEXPIRE', tk, retention)
      redis.call('XADD', done, '*', 'i', id)
      ack_del(band, group, eid)
      cancelled = cancelled + 1
      code = -2
      events[#events + 1] = id .. '\tCANCELLED\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS
    elseif tonumber(crashes) > maxCrashes then
      local typ = f[6] or copy_spec(tk, band, eid, prio) or ''
      local reason = 'crashed ' .. crashes .. ' times (worker lost mid-run)'
      local did = redis.call('XADD', dlq, '*', 'i', id, 'r', reason)
      redis.call('HSET', tk, 'status', 'DEAD', 'crashes', crashes, 'error', reason, 'finished', nowS, 'dead_id', did)
      ack_del(band, group, eid)
      dead = dead + 1
      code = -1
      events[#events + 1] = id .. '\tDEAD\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS .. '\t' .. reason
    else
      redis.call('HSET', tk, 'status', 'RUNNING', 'run', run, 'attempt', attempt, 'started', nowS, 'worker', worker)
      code = 1
    end
  elseif status == 'RUNNING' then
    -- a duplicate delivery (the group was lost and recreated): the running
    -- execution keeps it
  else
    ack_del(band, group, eid)
  end
  out[#out + 1] = code
  out[#out + 1] = run
  out[#out + 1] = attempt
  out[#out + 1] = crashes
end
out[#out + 1] = nowS

if dead > 0 then redis.call('HINCRBY', info, 'dead', dead) end
if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
if #events > 0 then redis.call('PUBLISH', channel, table.concat(events, '\n')) end
return out
