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
-- KEYS[8]        limits hash (the scoped limits' rate state and pauses)
-- KEYS[9]        limuse hash (leases live per scope)
-- KEYS[10]       limlease zset (scoped leases by expiry)
-- KEYS[11]       limwait zset (tasks a full scoped concurrency limit holds back)
-- KEYS[12]       schedule zset (tasks a scoped rate limit or pause defers)
-- KEYS[13]       wakeup stream (the scheduler re-reads the earliest due time)
-- KEYS[14]       limscope hash (the scoped limits: a task type's, a limit key's)
-- KEYS[15..24]   band streams of priority 0..9
-- KEYS[#KEYS-2]  ohold hash (per order key: the task in flight)
-- KEYS[#KEYS-1]  oline hash (tasks waiting for their order keys)
-- KEYS[#KEYS]    oindex hash (the ordered tasks without a hash)
-- KEYS[25..]     the task hash of each entry, in order (its last 26
--                characters are the task's ULID)
--
-- ARGV[1]        consumer group
-- ARGV[2]        worker id
-- ARGV[3]        max crashes: reclaims of a RUNNING task (its worker died)
--                tolerated before it goes DEAD
-- ARGV[4]        events channel (for tasks that end here)
-- ARGV[5]        retention of finished tasks, ms
-- ARGV[6]        the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[7]        scoped lease lifetime, ms (the visibility timeout)
-- ARGV[9+3N]     cancels channel (a limit that cancels its oldest run)
-- ARGV[8]        N; then 3 values per entry: band, entry id, and how it
--                came: a letter for its kind — "b" the task was born as this
--                entry (which carries no "i"), "o" a light ordered task's
--                entry (it has no hash either: started, given back or ended
--                as a born one, lib_order.lua), "h" an entry written again for
--                a task with a hash, "g" such an entry admitted under its
--                group's window (it carries "f") — then its mode: 0 new delivery,
--                1 reclaimed from a lost worker, 2 give back (claimed beyond
--                the worker's free slots: a QUEUED task's entry goes back to
--                the tail of its band, unstarted), 3 malformed (neither a
--                task's birth entry nor an entry written again:
--                dead-lettered), 4 and 5 resumed: a claim of this worker —
--                a new delivery (4) or a reclaim (5) — whose claim's or
--                start's answer it did not get (a connection lost with the
--                call in flight): a run of this worker's the task holds
--                goes on (the start happened, no handler ran), else as 0
--                or 1; 6 a reclaim to give back (a reader that does not run
--                it: a holder of other task types): the lost run's crash is
--                recorded as for 1, then the task goes back to the tail of
--                its band QUEUED, as for 2; e.g. "b0"; then, each after a newline,
--                the scopes whose limits it is under ("t:<type>",
--                "k:<limit key>"; none when the queue has no scoped limit);
--                a workflow's step has "w" and the index in KEYS of its
--                workflow hash after the mode ("b1w31"): a task that ends
--                here ends its step there (wf_task_end)
--                (values are few: every argument costs a script call)
--
-- A running task's state is its Run field ("run|attempt|crashes|started|
-- cancel|worker"): the fence of its execution. Per entry:
--   born, no Run field        -> RUNNING: its Run field is set (the check is
--                                one HMGET of the batch's fields, the starts
--                                one HSET); the task's fields stay in the
--                                entry
--   QUEUED (a hash)           -> RUNNING: attempt + 1, run + 1 (attempt + 0
--                                when it resumes from a suspension: its
--                                "resume" field, suspend.lua)
--   RUNNING and reclaimed     -> its worker died: crashes + 1 (the lost run
--                                goes into its hash's history; a born task
--                                reclaimed without a Run field lost its
--                                implicit first run, run 1), and either
--                                CANCELLED when its cancellation was
--                                requested (no new execution starts),
--                                RUNNING again (run + 1, same attempt) or,
--                                past max crashes, DEAD
--   queue paused, or give back -> the entry goes back to the tail of its band
--                                (a born task gets a hash: its id names the
--                                entry it leaves)
--   withdrawn (cancelled after its claim) -> skipped, its Run field removed
--   under scoped limits, about to start -> it starts with a lease of each
--                                scope with a concurrency limit and a token
--                                of each with a rate; or, when a concurrency
--                                limit is full, it waits QUEUED in limwait
--                                (code 3) until a lease of the scope is
--                                released; or, under a pause or a rate
--                                (whose start is reserved for it), it is
--                                SCHEDULED for then (code 4); a task taken
--                                over from a lost worker asks them too (its
--                                lost run's lease may have expired and the
--                                slot gone to another start): held back, it
--                                keeps its attempt and run numbers
--   admitted under its group's window, and started or skipped here ->
--                                the group's count in gcount goes down, and
--                                the group's best waiters for the room it
--                                has are returned (the caller moves them in:
--                                gpromote.lua)
--   malformed                 -> a DEAD record with the entry's fields as its
--                                error, dead-lettered
--   resumed, and RUNNING in a run of this worker's -> that run goes on:
--                                started again now (its Run field's start,
--                                and the hash's), the same run, attempt and
--                                crashes; no crash is counted (its start's
--                                answer was lost: no handler ran)
--   born, at or before info's g<p> (its group was recreated on entries
--   already there), with a packed record or a hash -> an acknowledged
--   leftover delivered again: acknowledged and deleted, skipped
--   no longer pending for this worker (reclaimed by another since its
--   claim: this worker stalled) -> skipped, untouched
--   anything else (finished, cancelled, scheduled, gone, or a duplicate
--   delivery after a lost consumer group) -> the entry is acknowledged and
--   deleted (a running task's duplicate is left to its execution), skipped
--
-- Returns 4 values per entry — code, run, attempt, crashes — then the start
-- time (Unix ms), then the gwait members to move into the bands, then what
-- the rules of full limits did, each marked with its rule's letter and the
-- 1-based index i of the entry whose start applied it: "w:<i>:<id>" for
-- each waiter a full limit that replaces its waiting tasks ("w") replaced
-- (the caller cancels them); "n:<i>" when a full limit that cancels the
-- newest ("n") ended the task here CANCELLED; "r:<i>" when one that cancels
-- its oldest run ("r") requested that run's cancellation
-- (scope_cancel_oldest: not when one of its runs was being cancelled
-- already) — it holds the task back as a full limit does (the rules' counts
-- in metrics come from these marks). Code is 1 when started (the caller publishes the RUNNING
-- event), 0 when skipped, -1 when it went DEAD, -2 when it went CANCELLED
-- (events of both published here), 3 when a scoped concurrency limit holds
-- it back, 4 when a scoped rate or pause defers it. The band an entry came
-- from is its task's priority.

local info, dlq, done, runs, fin, gwait, gcount = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local limits, use, leases, wait, schedule, wakeup = KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
local sdefs = KEYS[14]
local ohold, oline, oindex = KEYS[#KEYS - 2], KEYS[#KEYS - 1], KEYS[#KEYS]
local group, worker = ARGV[1], ARGV[2]
local maxCrashes = tonumber(ARGV[3])
local channel, retention, queue = ARGV[4], ARGV[5], ARGV[6]
local ttl = tonumber(ARGV[7])
local n = tonumber(ARGV[8])
local cancels = ARGV[9 + 3 * n]
local ruled = {}   -- what the rules of full limits did ("w:<i>:<id>", "n:<i>", "r:<i>"; see Returns)
local entry = 0   -- the index (1-based) of the entry being started

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
for i = 1, n do ulids[i] = string.sub(KEYS[24 + i], -26) end
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

local swept, wake = false, false
-- end_cancelled ends task id (hash tk, of type typ; a step of the workflow
-- in KEYS wfk, or nil) CANCELLED here, unstarted, with error why (nil:
-- "cancelled"): its code, -2.
local function end_cancelled(tk, id, typ, attempt, prio, wfk, why)
  if order_release(ohold, oline, oindex, schedule, queue, redis.call('HGET', tk, 'okey'), string.sub(id, -26), now, 15) then
    wake = true
  end
  redis.call('HSET', tk, 'status', 'CANCELLED', 'error', why or 'cancelled', 'finished', nowS)
  redis.call('PEXPIRE', tk, retention)
  list_done(info, done, {id})
  cancelled = cancelled + 1
  events[#events + 1] = id .. '\tCANCELLED\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS
  if wfk then
    wf_task_end(wfk, 15, queue, retention, true, redis.call('HGET', tk, 'wstep'), id, 'CANCELLED', nil, why or 'cancelled')
  end
  return -2
end

local NO_SCOPES = {} -- an entry's scopes when the queue has no scoped limit (never written)
-- held checks the scoped limits of a task about to start (scopes): nil
-- when it may (its leases and tokens taken), else it is held back — its
-- hash made from its entry when born — and its code (3 waiting in limwait
-- for a lease, 4 SCHEDULED for its reserved rate slot or a pause's end).
local function held(scopes, tk, id, ulid, run, band, eid, prio, born, reserved, wfk)
  if #scopes == 0 then return nil end
  if not swept then
    scope_sweep(use, leases, now)
    swept = true
  end
  local why, scope, at, rate = scope_take(sdefs, limits, use, leases, scopes, ulid .. '|' .. run, now, ttl, reserved)
  if not why then return nil end
  if born then copy_spec(tk, band, eid, prio) end
  ack_del(band, group, eid)
  if why == 'wait' then
    -- the limit's rule when full (its OnFull letter, in at here)
    if at == 'n' then
      -- cancel the newest: this task ends here, unstarted
      local f = redis.call('HMGET', tk, 'type', 'attempt')
      ruled[#ruled + 1] = 'n:' .. entry
      return end_cancelled(tk, id, f[1] or '', f[2] or '0', prio, wfk, 'cancelled: limit ' .. scope .. ' full')
    end
    if at == 'r' and scope_cancel_oldest(leases, runs, scope, queue, cancels) then ruled[#ruled + 1] = 'r:' .. entry end
    if at == 'w' then
      for _, m in ipairs(scope_waiters(wait, scope, 100)) do
        ruled[#ruled + 1] = 'w:' .. entry .. ':' .. queue .. '-' .. string.sub(m, -26)
      end
    end
    scope_park(wait, use, tk, id, prio, scope)
    return 3
  end
  local atS = string.format('%d', at)
  redis.call('HSET', tk, 'status', 'SCHEDULED', 'due', atS, 'throttled', scope)
  if rate then redis.call('HSET', tk, 'rslot', scope) end
  redis.call('ZADD', schedule, atS, id)
  wake = true
  return 4
end


-- start_born starts a task born as its entry, in its first run, unless
-- its scoped limits hold it back: the code, run, attempt and crashes to
-- answer.
local function start_born(scopes, tk, id, ulid, band, eid, prio, wfk)
  local code = held(scopes, tk, id, ulid, '1', band, eid, prio, true, nil, wfk)
  if code then return code, '', '', '' end
  starts[#starts + 1] = ulid
  starts[#starts + 1] = '1|1|0|' .. nowS .. '|0|' .. worker
  return 1, '1', '1', '0'
end

-- mine: the entries still pending for this worker. A claim is fenced by
-- its pending entry: one this worker no longer holds (a worker frozen
-- between its claim and this start, meanwhile reclaimed by another, maybe
-- finished) is not its to start, give back or end — skipped, untouched.
local mine = {}
do
  local byBand = {}
  for i = 0, n - 1 do
    local p = ARGV[9 + i * 3]
    local l = byBand[p]
    if not l then l = {}; byBand[p] = l end
    l[#l + 1] = ARGV[10 + i * 3]
  end
  for p, eids in pairs(byBand) do
    local set = {}
    mine[p] = set
    claims_of(KEYS[15 + tonumber(p)], group, worker, eids, set)
  end
end

for i = 0, n - 1 do
  entry = i + 1
  local a = 9 + i * 3
  local prio = ARGV[a]
  local band = KEYS[15 + tonumber(prio)]
  local eid, how = ARGV[a + 1], ARGV[a + 2]
  local k1 = string.byte(how, 1)
  local born, mode = k1 == 98 or k1 == 111, string.sub(how, 2, 2) -- 'b', 'o'
  local admitted = k1 == 103 -- 'g'
  local scopes = NO_SCOPES
  local nl = string.find(how, '\n', 3, true)
  local wfk
  if string.byte(how, 3) == 119 then -- 'w'
    wfk = KEYS[tonumber(string.sub(how, 4, (nl or 0) - 1))]
  end
  if nl then
    scopes = {}
    for sc in string.gmatch(string.sub(how, nl + 1), '[^\n]+') do scopes[#scopes + 1] = sc end
  end
  local tk = KEYS[25 + i]
  local ulid = ulids[i + 1]
  local id = queue .. '-' .. ulid
  local code, run, attempt, crashes = 0, '', '', ''
  local rv = states[i + 1]
  local rs = run_state(rv)
  local resumed, giveAfter = false, false
  if mode == '6' then mode, giveAfter = '1', true end
  if mode == '4' or mode == '5' then
    -- this worker's claim, whose answer it did not get: its own start
    -- goes on; a start that never happened is made as the claim's
    resumed = rs ~= nil and rs.worker == worker
    if mode == '4' then mode = '0' else mode = '1' end
  end
  -- taken over from a lost worker with no Run field of its own: an
  -- implicit first run (first_runs) crashed — or a claim its worker lost
  -- before it started it, counted alike (the store cannot tell them
  -- apart); read.lua noted the lost run ("L|<Run value>"), else its start
  -- and worker are unknown (the loss's time, none)
  local lostFirst = born and mode == '1' and (not rv or string.sub(rv, 1, 2) == 'L|')
  if lostFirst then
    rs = run_state(rv and string.sub(rv, 3)) or implicit_state(nowS, '')
  end
  if not mine[prio][eid] then
    -- lost since its claim (see mine): another worker's now
  elseif resumed then
    run, attempt, crashes = rs.run, rs.attempt, rs.crashes
    rs.started = nowS
    starts[#starts + 1] = ulid
    starts[#starts + 1] = run_value(rs)
    if redis.call('HGET', tk, 'status') == 'RUNNING' then redis.call('HSET', tk, 'started', nowS) end
    code = 1
  elseif lostFirst and (record_status(redis.call('HGET', fin, ulid)) or redis.call('EXISTS', tk) == 1) then
    -- the lost run's outcome was recorded after all, before this start
    -- (its worker's late finish acknowledged the entry): nothing to run
    redis.call('HDEL', runs, ulid)
    ack_del(band, group, eid)
  elseif born and not rv and mode ~= '3' and suspect(prio, eid) and
      (record_status(redis.call('HGET', fin, ulid)) or redis.call('EXISTS', tk) == 1) then
    -- an acknowledged leftover of a task that finished (or has a record
    -- of its own), delivered again by a recreated consumer group
    ack_del(band, group, eid)
  elseif born and not rv and mode == '0' and suspect(prio, eid) then
    -- delivered again by a recreated consumer group with no trace of a
    -- run: never started, or running as an implicit first run whose
    -- pending entry went with the group. It stays claimed, unstarted:
    -- that run's outcome records meanwhile (finish.lua), else a reclaim
    -- pass hands it on after the visibility timeout, counting the crash
  elseif born and mode == '0' and not paused and not rv then
    -- the common case: a new task's first start
    code, run, attempt, crashes = start_born(scopes, tk, id, ulid, band, eid, prio, wfk)
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
        code = end_cancelled(tk, id, typ, attempt, prio, wfk)
      else
        local reason = 'crashed ' .. crashes .. ' times (worker lost mid-run)'
        local did = redis.call('XADD', dlq, '*', 'i', id, 'r', reason)
        if order_release(ohold, oline, oindex, schedule, queue, redis.call('HGET', tk, 'okey'), ulid, now, 15) then
          wake = true
        end
        redis.call('HSET', tk, 'status', 'DEAD', 'error', reason, 'finished', nowS, 'dead_id', did)
        dead = dead + 1
        code = -1
        events[#events + 1] = id .. '\tDEAD\t' .. typ .. '\t' .. attempt .. '\t' .. prio .. '\t' .. nowS .. '\t' .. reason
        if wfk then
          wf_task_end(wfk, 15, queue, retention, true, redis.call('HGET', tk, 'wstep'), id, 'DEAD', nil, reason)
        end
      end
    elseif giveAfter then
      -- taken over by a reader that does not run it: its crash recorded,
      -- it goes back QUEUED, its next start keeping this attempt (the
      -- hash path adds one to each)
      redis.call('HDEL', runs, ulid)
      redis.call('HSET', tk, 'attempt', tostring(tonumber(attempt) - 1), 'run', rs.run)
      giveback(band, tk, id, eid, prio, not typ)
      run, attempt, crashes = '', '', ''
    else
      run = tostring(tonumber(rs.run) + 1)
      code = held(scopes, tk, id, ulid, run, band, eid, prio, not typ, nil, wfk)
      if code then
        -- its limit is full (the lost run's lease expired and a start took
        -- the slot): it waits as a new task would, its next start keeping
        -- this attempt and run numbers (the hash path adds one to each)
        redis.call('HDEL', runs, ulid)
        redis.call('HSET', tk, 'attempt', tostring(tonumber(attempt) - 1), 'run', rs.run)
        run, attempt, crashes = '', '', ''
      else
        redis.call('HSET', runs, ulid, run .. '|' .. attempt .. '|' .. crashes .. '|' .. nowS .. '|0|' .. worker)
        if typ then redis.call('HSET', tk, 'status', 'RUNNING', 'started', nowS, 'worker', worker) end
        code = 1
      end
    end
  elseif rs and born and rs.run == '1' and rs.cancel == '1' and rs.worker == worker then
    -- claimed by this worker, and its cancellation requested before this
    -- start (cancel.lua, as of an implicit first run): it ends here
    local typ = copy_spec(tk, band, eid, prio) or ''
    redis.call('HSET', tk, 'attempt', '0')
    redis.call('HDEL', runs, ulid)
    ack_del(band, group, eid)
    code = end_cancelled(tk, id, typ, '0', prio, wfk)
  elseif rs then
    -- a duplicate delivery (the group was lost and recreated): the running
    -- execution keeps it
  elseif born then
    if paused or mode == '2' or giveAfter then
      giveback(band, tk, id, eid, prio, true)
    else -- claimed and not started yet (a blocking read's entries)
      code, run, attempt, crashes = start_born(scopes, tk, id, ulid, band, eid, prio, wfk)
    end
  else
    local f = redis.call('HMGET', tk, 'status', 'run', 'attempt', 'crashes', 'group', 'rslot', 'resume')
    local grp = admitted and f[5] or nil
    if grp and not (f[1] == 'QUEUED' and (paused or mode == '2' or giveAfter)) then
      room[grp] = group_left(gcount, grp)
    end
    if f[1] == 'QUEUED' and (paused or mode == '2' or giveAfter) then
      giveback(band, tk, id, eid, prio, false, grp)
    elseif f[1] == 'QUEUED' then
      code = held(scopes, tk, id, ulid, tostring(tonumber(f[2] or '0') + 1), band, eid, prio, false, f[6], wfk)
      if not code then
        if f[6] or #scopes > 0 then redis.call('HDEL', tk, 'rslot', 'throttled') end
        run = tostring(tonumber(f[2] or '0') + 1)
        attempt = tostring(tonumber(f[3] or '0') + 1)
        if f[7] then
          -- resumed after a suspension (suspend.lua): the same attempt
          attempt = f[3]
          redis.call('HDEL', tk, 'resume')
        end
        crashes = f[4] or '0'
        redis.call('HSET', tk, 'status', 'RUNNING', 'run', run, 'attempt', attempt, 'started', nowS, 'worker', worker)
        starts[#starts + 1] = ulid
        starts[#starts + 1] = run .. '|' .. attempt .. '|' .. crashes .. '|' .. nowS .. '|0|' .. worker
        code = 1
      end
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
for _, r in ipairs(ruled) do out[#out + 1] = r end

if #starts > 0 then redis.call('HSET', runs, '~', run_pad(), unpack(starts)) end
if wake then redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1') end

if dead > 0 then redis.call('HINCRBY', info, 'dead', dead) end
if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
if #events > 0 then redis.call('PUBLISH', channel, table.concat(events, '\n')) end
-- (after the events of the tasks that ended here: each next task's QUEUED follows its key's holder's end)
order_publish(channel, nowS)
return out
