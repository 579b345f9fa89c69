-- start.lua: start claimed tasks — QUEUED -> RUNNING — or resolve why
-- not, for one worker, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        dead-letter stream
-- KEYS[3]        done stream (finished tasks: entries "i" = their ids)
-- KEYS[4]        run hash (running tasks' state, by ULID)
-- KEYS[5]        finished hash (packed records, by ULID)
-- KEYS[6]        gwait zset (tasks waiting for their group's turn)
-- KEYS[7]        gcount hash (per group: admitted entries not started)
-- KEYS[8..17]    band streams of priority 0..9
-- KEYS[18..]     the task hash of each entry, in order (its last 26
--                characters are the task's ULID)
--
-- ARGV[1]        consumer group
-- ARGV[2]        worker id
-- ARGV[3]        max crashes: reclaims of a RUNNING task (its worker died)
--                tolerated before it goes DEAD
-- ARGV[4]        events channel (for tasks that end here)
-- ARGV[5]        retention of finished tasks, ms
-- ARGV[6]        the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[7]        N; then 3 values per entry: band, entry id, and how it
--                came: a letter for its kind — "b" the task was born as this
--                entry (which carries no "i"), "h" an entry written again for
--                a task with a hash, "g" such an entry admitted under its
--                group's window (it carries "f") — then its mode: 0 new delivery,
--                1 reclaimed from a lost worker, 2 give back (claimed beyond
--                the worker's free slots: a QUEUED task's entry goes back to
--                the tail of its band, unstarted), 3 malformed (neither a
--                task's birth entry nor an entry written again:
--                dead-lettered); e.g. "b0"
--                (values are few: every argument costs a script call)
--
-- A running task's state is its Run field ("run|attempt|crashes|started|
-- cancel|worker"): the fence of its execution. Per entry:
--   born, no Run field        -> RUNNING: its Run field is set (the check is
--                                one HMGET of the batch's fields, the starts
--                                one HSET); the task's fields stay in the
--                                entry
--   QUEUED (a hash)           -> RUNNING: attempt + 1, run + 1
--   RUNNING and reclaimed     -> its worker died: crashes + 1 (the lost run
--                                goes into its hash's history), and either
--                                CANCELLED when its cancellation was
--                                requested (no new execution starts),
--                                RUNNING again (run + 1, same attempt) or,
--                                past max crashes, DEAD
--   queue paused, or give back -> the entry goes back to the tail of its band
--                                (a born task gets a hash: its id names the
--                                entry it leaves)
--   withdrawn (cancelled after its claim) -> skipped, its Run field removed
--   admitted under its group's window, and started or skipped here ->
--                                the group's count in gcount goes down, and
--                                the group's best waiters for the room it
--                                has are returned (the caller moves them in:
--                                gpromote.lua)
--   malformed                 -> a DEAD record with the entry's fields as its
--                                error, dead-lettered
--   born, at or before info's g<p> (its group was recreated on entries
--   already there), with a packed record or a hash -> an acknowledged
--   leftover delivered again: acknowledged and deleted, skipped
--   anything else (finished, cancelled, scheduled, gone, or a duplicate
--   delivery after a lost consumer group) -> the entry is acknowledged and
--   deleted (a running task's duplicate is left to its execution), skipped
--
-- Returns 4 values per entry — code, run, attempt, crashes — then the start
-- time (Unix ms), then the gwait members to move into the bands. Code is 1 when started (the caller publishes the RUNNING
-- event), 0 when skipped, -1 when it went DEAD, -2 when it went CANCELLED
-- (events of both published here). The band an entry came from is its
-- task's priority.

local info, dlq, done, runs, fin, gwait, gcount = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local group, worker = ARGV[1], ARGV[2]
local maxCrashes = tonumber(ARGV[3])
local channel, retention, queue = ARGV[4], ARGV[5], ARGV[6]
local n = tonumber(ARGV[7])

local now, nowS = now_ms()
local inf = redis.call('HMGET', info, 'paused', 'g0', 'g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'g9')
local paused = inf[1] == '1'
-- suspect reports whether entry eid of band p may be an acknowledged
-- leftover delivered again by a recreated group (create_group)
local function suspect(p, eid)
  local last = inf[2 + tonumber(p)]
  return last and last ~= '0-0' and id_le(eid, last)
end

local out, events = {}, {}
local dead, cancelled = 0, 0
local ulids = {}
for i = 1, n do ulids[i] = string.sub(KEYS[17 + i], -26) end
local states = redis.call('HMGET', runs, unpack(ulids))
local starts = {} -- Run fields of fresh starts, set together at the end
local room = {}   -- group -> its room in the bands, of the groups whose entries left them

-- giveback puts the entry back at the tail of its band, unstarted (still
-- admitted under grp, when it was).
local function giveback(band, tk, id, eid, prio, born, grp)
  if born then copy_spec(tk, band, eid, prio) end
  redis.call('HSET', tk, 'status', 'QUEUED')
  ack_del(band, group, eid)
  readd(band, tk, id, grp)
end

for i = 0, n - 1 do
  local a = 8 + i * 3
  local prio = ARGV[a]
  local band = KEYS[8 + tonumber(prio)]
  local eid, how = ARGV[a + 1], ARGV[a + 2]
  local born, mode = string.byte(how, 1) == 98, string.sub(how, 2) -- 'b'
  local admitted = string.byte(how, 1) == 103 -- 'g'
  local tk = KEYS[18 + i]
  local ulid = ulids[i + 1]
  local id = queue .. '-' .. ulid
  local code, run, attempt, crashes = 0, '', '', ''
  local rv = states[i + 1]
  local rs = run_state(rv)
  if born and not rv and mode ~= '3' and suspect(prio, eid) and
      (record_status(redis.call('HGET', fin, ulid)) or redis.call('EXISTS', tk) == 1) then
    -- an acknowledged leftover of a task that finished (or has a record
    -- of its own), delivered again by a recreated consumer group
    ack_del(band, group, eid)
  elseif born and mode == '0' and not paused and not rv then
    -- the common case: a new task's first start
    run, attempt, crashes = '1', '1', '0'
    starts[#starts + 1] = ulid
    starts[#starts + 1] = '1|1|0|' .. nowS .. '|0|' .. worker
    code = 1
  elseif mode == '3' then
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
  elseif rv == 'C' then
    -- cancelled between its claim and this start
    redis.call('HDEL', runs, ulid)
    ack_del(band, group, eid)
  elseif rs and mode == '1' then
    -- the previous execution's worker died: record it, count it
    crashes = tostring(tonumber(rs.crashes) + 1)
    attempt = rs.attempt
    redis.call('HSET', tk, 'h' .. rs.run, rs.started .. '|' .. nowS .. '|' .. rs.worker .. '|crashed|worker lost',
      'crashes', crashes, 'attempt', attempt, 'run', rs.run)
    local typ = redis.call('HGET', tk, 'type')
    if rs.cancel == '1' or tonumber(crashes) > maxCrashes then
      if not typ then typ = copy_spec(tk, band, eid, prio) or '' end
      redis.call('HDEL', runs, ulid)
      ack_del(band, group, eid)
      if rs.cancel == '1' then
        -- cancelled while its worker was lost: it ends here, unstarted
        redis.call('HSET', tk, 'status', 'CANCELLED', 'error', 'cancelled', 'finished', nowS)
        redis.call('PEXPIRE', tk, retention)
        list_done(info, done, {id})
        cancelled = cancelled + 1
        code = -2
        events[#events + 1] = id .. '\tCANCELLED\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS
      else
        local reason = 'crashed ' .. crashes .. ' times (worker lost mid-run)'
        local did = redis.call('XADD', dlq, '*', 'i', id, 'r', reason)
        redis.call('HSET', tk, 'status', 'DEAD', 'error', reason, 'finished', nowS, 'dead_id', did)
        dead = dead + 1
        code = -1
        events[#events + 1] = id .. '\tDEAD\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS .. '\t' .. reason
      end
    else
      run = tostring(tonumber(rs.run) + 1)
      redis.call('HSET', runs, ulid, run .. '|' .. attempt .. '|' .. crashes .. '|' .. nowS .. '|0|' .. worker)
      if typ then redis.call('HSET', tk, 'status', 'RUNNING', 'started', nowS, 'worker', worker) end
      code = 1
    end
  elseif rs then
    -- a duplicate delivery (the group was lost and recreated): the running
    -- execution keeps it
  elseif born then
    if paused or mode == '2' then
      giveback(band, tk, id, eid, prio, true)
    else -- claimed by a worker that died before it started it
      run, attempt, crashes = '1', '1', '0'
      starts[#starts + 1] = ulid
      starts[#starts + 1] = '1|1|0|' .. nowS .. '|0|' .. worker
      code = 1
    end
  else
    local f = redis.call('HMGET', tk, 'status', 'run', 'attempt', 'crashes', 'group')
    local grp = admitted and f[5] or nil
    if grp and not (f[1] == 'QUEUED' and (paused or mode == '2')) then
      room[grp] = group_left(gcount, grp)
    end
    if f[1] == 'QUEUED' and (paused or mode == '2') then
      giveback(band, tk, id, eid, prio, false, grp)
    elseif f[1] == 'QUEUED' then
      run = tostring(tonumber(f[2] or '0') + 1)
      attempt = tostring(tonumber(f[3] or '0') + 1)
      crashes = f[4] or '0'
      redis.call('HSET', tk, 'status', 'RUNNING', 'run', run, 'attempt', attempt, 'started', nowS, 'worker', worker)
      starts[#starts + 1] = ulid
      starts[#starts + 1] = run .. '|' .. attempt .. '|' .. crashes .. '|' .. nowS .. '|0|' .. worker
      code = 1
    else
      ack_del(band, group, eid)
    end
  end
  out[#out + 1] = code
  out[#out + 1] = run
  out[#out + 1] = attempt
  out[#out + 1] = crashes
end
out[#out + 1] = nowS
for grp, r in pairs(room) do
  for _, m in ipairs(group_waiters(gwait, grp, r)) do out[#out + 1] = m end
end

if #starts > 0 then redis.call('HSET', runs, '~', run_pad(), unpack(starts)) end

if dead > 0 then redis.call('HINCRBY', info, 'dead', dead) end
if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
if #events > 0 then redis.call('PUBLISH', channel, table.concat(events, '\n')) end
return out
