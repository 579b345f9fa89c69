-- finish.lua: record the outcome of running tasks, fenced by the
-- execution that ran them, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3]        dead-letter stream
-- KEYS[4]        wakeup stream
-- KEYS[5]        done stream (finished tasks: entries "i" = their ids)
-- KEYS[6]        run hash (running tasks' state, by ULID)
-- KEYS[7]        finished hash (packed records, by ULID)
-- KEYS[8..17]    band streams of priority 0..9
-- KEYS[17+i]     item i's task hash (1..N; it ends with the task's ULID)
-- KEYS[17+N+j]   idempotency records and workflow hashes, referenced by
--                index below
-- KEYS[#KEYS-3]  ohold hash (per order key: the task in flight)
-- KEYS[#KEYS-2]  oline hash (tasks waiting for their order keys)
-- KEYS[#KEYS-1]  oindex hash (the ordered tasks without a hash)
-- KEYS[#KEYS]    progress hash (the reports of running executions, by ULID)
--
-- ARGV[1]        consumer group
-- ARGV[2]        retention of finished tasks, ms
-- ARGV[3]        idempotency window, ms
-- ARGV[4]        worker id
-- ARGV[5]        the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[6]        "1" to keep succeeded tasks for the retention, "0" to delete
--                them as they succeed (their idempotency records stay)
-- ARGV[#ARGV]    events channel (the QUEUED events of the tasks ended
--                tasks passed their order keys to)
-- ARGV[7]        N; then per item 7 values — band, entry id, run (the
--                fence), outcome, text, idempotency key index (0 = none),
--                kind — and, for kind H, 8 more: the fields of the task's
--                birth entry (type, payload, max attempts, timeout ms,
--                idempotency hash or "", traceparent or "") and the run's
--                start (Unix ms), then the task awaiting it ("<id> <step>"
--                or ""). The kind says where the outcome
--                goes: "P" a packed record (a task born as its entry
--                finishing SUCCEEDED or CANCELLED in its first execution:
--                text is then the record's body, which the caller packed,
--                and this script prefixes with the status, the finish time
--                and the run), "H" its hash (a task born as its entry, whose
--                fields go into the hash), "h" its hash (which holds them);
--                "Q" and "O" are "P" and "H" of a light ordered task (its
--                entry carries its order key, lib_order.lua): Q's body
--                starts with "K<order key>|" (an R7 record), O's item has 2
--                more values after H's: the order key and the creation
--                time (Unix ms); both pass the key on (not a retry).
--                Otherwise text is the result or the error. The kind of a
--                workflow's step ("H" or "h") is followed by the index in
--                KEYS of its workflow hash ("H19"), and the item by 2 more
--                values: its node, and the previous result it started
--                with ("" for none) — and for kind P a third: its result
--                (its packed record is an R4 one, or R6, with the workflow's
--                fields) —: its end is recorded in the workflow, and what
--                follows starts, in this call (wf_task_end).
--                A retry has its
--                delay ms after a "/" in the outcome ("retry/1500"). (Values
--                are few, and the common case's writes are one command per
--                batch: every argument and every call costs.)
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
-- An item acts only if the task's Run field is exactly that run: a stale
-- worker (its task reclaimed and restarted elsewhere, or finished) changes
-- nothing. An implicit first run (a task born as its entry, claimed by a
-- plain read and started without a Run field) has none: its item acts
-- only while its entry is pending for this worker in its first delivery
-- (first_runs; a reclaim adds a delivery, an outcome acknowledges it), and
-- if cancel.lua withdrew it meanwhile (Run field "C", the task CANCELLED
-- already) the item only acknowledges its entry and answers CANCELLED. An acting item removes the Run field and records the outcome:
-- a task born as its entry that SUCCEEDED or was CANCELLED in its first
-- execution gets a packed record (a field of the finished hash); any other
-- gets its hash (with the entry's fields when born), the execution in
-- history field h<run> ("start|end|worker|outcome|error"). A SUCCEEDED or
-- CANCELLED task is listed in the done stream (one entry for the batch's)
-- and goes after the retention: here, the done stream's entries past it
-- are removed with their packed records (up to 8 entries per call; the
-- scheduler trims the rest, and by count); a hash expires by itself. A DEAD task is dead-lettered and does not
-- expire (the stream is capped by the scheduler, records with it); the
-- idempotency record is extended to the window. A task of an order key
-- (kind "h", "Q" or "O") that ends — not a retry — passes its key to the next waiter
-- (lib_order.lua's order_release: into its band, or the schedule). The entries are
-- acknowledged and the bands trimmed (deleted at once when succeeded
-- tasks are not kept: no record would tell a leftover entry from a new
-- one).
--
-- An item whose execution's outcome is recorded already (its record says
-- that run) changes nothing and answers the task's status: recording an
-- outcome again is harmless. (A reclaim moves the run on, so a stale
-- execution never matches.)
--
-- Returns one value per item: the new status (or the recorded one), or ""
-- when stale (the caller publishes the lifecycle events).

local info, schedule, dlq, wakeup, done, runs, fin = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local group = ARGV[1]
local retention, window, worker, queue = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local keepSucceeded = ARGV[6] == '1'
local n = tonumber(ARGV[7])

local now, nowS = now_ms()
local ohold, oline, oindex = KEYS[#KEYS - 3], KEYS[#KEYS - 2], KEYS[#KEYS - 1]
local passedLater = false -- an order key was passed to a waiter via the schedule: wake the scheduler

local ulids = {}
for i = 1, n do ulids[i] = string.sub(KEYS[17 + i], -26) end
local states = redis.call('HMGET', runs, unpack(ulids))

-- next_item is the index in ARGV of the item after the one at a
local function next_item(a)
  local kind = ARGV[a + 6]
  local k1 = string.byte(kind, 1)
  local nxt = a + 7
  if k1 == 72 then nxt = a + 15 elseif k1 == 79 then nxt = a + 17 end -- 'H', 'O'
  if #kind > 1 then
    nxt = nxt + 2
    if k1 == 80 then nxt = nxt + 1 end -- 'P'
  end
  return nxt
end

-- The items of run 1 without a Run field (or withdrawn, "C") may be
-- implicit first runs: fenced by their pending entries (implicit_runs).
local firsts
do
  local cand, at = {}, {}
  local a = 8
  for i = 1, n do
    local st = states[i]
    if (not st or st == 'C') and ARGV[a + 2] == '1' then add_candidate(cand, at, ARGV[a], ARGV[a + 1], i) end
    a = next_item(a)
  end
  firsts = implicit_runs(cand, at, states, ulids, 8, 17, group, worker, info, fin)
end

local out = {}
local retried, succeeded, deadN, cancelled = 0, 0, 0, 0
local acks, ended, packed, listed = {}, {}, {}, {}
local a = 8
for i = 1, n do
  local p, eid, run, outcome, text = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local ik, kind = ARGV[a + 5], ARGV[a + 6] -- (ik a number only when used: tonumber is strtod)
  local wfk, wnode, wprev, wres
  if #kind > 1 then
    wfk = KEYS[tonumber(string.sub(kind, 2))]
    kind = string.sub(kind, 1, 1)
  end
  local s = a + 7 -- the birth entry's fields and the run's start, for kind H
  if kind == 'H' then a = a + 15 elseif kind == 'O' then a = a + 17 else a = a + 7 end
  if wfk then
    wnode, wprev = ARGV[a], ARGV[a + 1]
    a = a + 2
    if kind == 'P' then
      wres = ARGV[a]
      a = a + 1
    end
  end
  local key, ulid = KEYS[17 + i], ulids[i]
  local id = queue .. '-' .. ulid
  local st = states[i]
  local res = ''
  local implicit = run == '1' and (kind == 'P' or kind == 'H') and (firsts[p] or NONE)[eid]
  local mine = (st and string.sub(st, 1, #run + 1) == run .. '|') or (implicit and not st)
  if implicit and st == 'C' then
    -- an implicit first run cancelled (cancel.lua recorded it CANCELLED):
    -- its entry goes, the outcome stays the cancellation's
    redis.call('HDEL', runs, ulid)
    res = 'CANCELLED'
    local ids = acks[p]
    if not ids then ids = {}; acks[p] = ids end
    ids[#ids + 1] = eid
  elseif mine and (kind == 'P' or kind == 'Q') then
    -- the common case: the packed record the caller made, and the fence
    -- and the cancel flag read straight from the Run field (an implicit
    -- first run has none: no cancellation, cancel.lua withdraws it)
    local cancel = st and string.match(st, '^%d+|%d+|%d+|%d+|(%d)|') == '1'
    if st then ended[#ended + 1] = ulid end
    local errText = ''
    if outcome == 'ok' and not cancel then
      res = 'SUCCEEDED'
      succeeded = succeeded + 1
    else
      res, errText = 'CANCELLED', 'cancelled'
      cancelled = cancelled + 1
    end
    if res == 'CANCELLED' or keepSucceeded then
      -- R3, R4 for a workflow's task; R5 and R6 are those of a traced
      -- task, whose body starts with 'T' and its traceparent
      -- (R7: a light ordered task's, its body starting "K<order key>|")
      local tag = 'R3|'
      local b1 = string.byte(text, 1)
      if b1 == 84 then tag = 'R5|' elseif b1 == 75 then tag = 'R7|' end
      if wfk then tag = (tag == 'R3|') and 'R4|' or 'R6|' end
      packed[#packed + 1] = ulid
      packed[#packed + 1] = tag .. res .. '|' .. nowS .. '|' .. run .. '|' .. #errText .. '|' .. errText .. '|' .. text
      listed[#listed + 1] = id
    end
    if ik ~= '0' then redis.call('PEXPIRE', KEYS[tonumber(ik)], window) end
    if wfk then wf_task_end(wfk, 8, queue, retention, keepSucceeded, wnode, id, res, wres, errText) end
    if kind == 'Q' and order_release(ohold, oline, oindex, schedule, queue, string.match(text, '^K([^|]+)|'), ulid, now, 8) then
      passedLater = true
    end
    local ids = acks[p]
    if not ids then ids = {}; acks[p] = ids end
    ids[#ids + 1] = eid
  elseif mine then
    local rs
    if st then
      rs = run_state(st)
    else
      rs = implicit_state(ARGV[s + 6], worker)
    end
    local delay
    if rs.cancel == '1' then
      -- cancelled while it ran: CANCELLED whatever the handler returned; a
      -- result is kept as the result, never as the error
      if outcome ~= 'ok' then text = '' end
      outcome = 'cancel'
    elseif string.byte(outcome, 1) == 114 then -- 'r': "retry/<delay>"
      delay = string.sub(outcome, 7) -- (two statements: the embedded
      outcome = 'retry'              -- backend's Lua assigns in order)
    end
    if st then ended[#ended + 1] = ulid end
    local result, errText = '', ''
    if outcome == 'ok' then result = text elseif outcome == 'cancel' then result, errText = text, 'cancelled' else errText = text end
    if outcome == 'ok' then res = 'SUCCEEDED' elseif outcome == 'cancel' then res = 'CANCELLED' elseif outcome == 'retry' then res = 'SCHEDULED' else res = 'DEAD' end
    do
      local hist = rs.started .. '|' .. nowS .. '|' .. worker .. '|' .. outcome .. '|' .. errText
      local fields = {'status', res, 'run', run, 'attempt', rs.attempt, 'crashes', rs.crashes, 'started', rs.started,
        'worker', worker, 'h' .. run, hist}
      if errText ~= '' then fields[#fields + 1], fields[#fields + 2] = 'error', errText end
      if result ~= '' then fields[#fields + 1], fields[#fields + 2] = 'result', result end
      if res == 'SCHEDULED' then
        local due = string.format('%d', now + tonumber(delay))
        fields[#fields + 1], fields[#fields + 2] = 'due', due
        redis.call('ZADD', schedule, due, id)
      elseif res == 'DEAD' then
        fields[#fields + 1], fields[#fields + 2] = 'dead_id', redis.call('XADD', dlq, '*', 'i', id, 'r', text)
      end
      if kind == 'H' or kind == 'O' then
        local m = #fields
        fields[m + 1], fields[m + 2] = 'type', ARGV[s]
        fields[m + 3], fields[m + 4] = 'payload', ARGV[s + 1]
        fields[m + 5], fields[m + 6] = 'prio', p
        fields[m + 7], fields[m + 8] = 'max_att', ARGV[s + 2]
        fields[m + 9], fields[m + 10] = 'timeout', ARGV[s + 3]
        fields[m + 11], fields[m + 12] = 'created', string.match(eid, '^(%d+)-')
        if kind == 'O' then fields[m + 12] = ARGV[s + 9] end
        if ARGV[s + 4] ~= '' then fields[m + 13], fields[m + 14] = 'idem', ARGV[s + 4] end
        if ARGV[s + 5] ~= '' then
          m = #fields
          fields[m + 1], fields[m + 2] = 'trace', ARGV[s + 5]
        end
        if ARGV[s + 7] ~= '' then
          m = #fields
          fields[m + 1], fields[m + 2] = 'parent', ARGV[s + 7]
        end
        if kind == 'O' then
          m = #fields
          fields[m + 1], fields[m + 2] = 'okey', ARGV[s + 8]
        end
        if wfk then
          m = #fields
          fields[m + 1], fields[m + 2], fields[m + 3], fields[m + 4] = 'wf', string.sub(wfk, -26), 'wstep', wnode
          if wprev ~= '' then fields[m + 5], fields[m + 6] = 'prev', wprev end
        end
      end
      if kind == 'h' and res ~= 'SCHEDULED' then
        if order_release(ohold, oline, oindex, schedule, queue, redis.call('HGET', key, 'okey'), ulid, now, 8) then
          passedLater = true
        end
      elseif kind == 'O' and res ~= 'SCHEDULED' then
        if order_release(ohold, oline, oindex, schedule, queue, ARGV[s + 8], ulid, now, 8) then passedLater = true end
      end
      if res == 'SUCCEEDED' and not keepSucceeded then
        redis.call('DEL', key)
      else
        redis.call('HSET', key, unpack(fields))
        if res == 'SUCCEEDED' or res == 'CANCELLED' then redis.call('PEXPIRE', key, retention) end
      end
    end
    if res == 'CANCELLED' or (res == 'SUCCEEDED' and keepSucceeded) then
      listed[#listed + 1] = id
    end
    if res == 'SUCCEEDED' then succeeded = succeeded + 1
    elseif res == 'CANCELLED' then cancelled = cancelled + 1
    elseif res == 'SCHEDULED' then retried = retried + 1
    else deadN = deadN + 1 end
    if ik ~= '0' and res ~= 'SCHEDULED' then redis.call('PEXPIRE', KEYS[tonumber(ik)], window) end
    if wfk and res ~= 'SCHEDULED' then
      wf_task_end(wfk, 8, queue, retention, keepSucceeded, wnode, id, res, result, errText)
    end
    local ids = acks[p]
    if not ids then ids = {}; acks[p] = ids end
    ids[#ids + 1] = eid
  elseif not st then
    -- this execution's outcome, recorded already (a durable worker records
    -- it again until the replicas have it): the status, nothing changed
    local st, rrun = record_status(redis.call('HGET', fin, ulid))
    if st and rrun == run then
      res = st
    elseif kind ~= 'P' and kind ~= 'Q' then
      local f = redis.call('HMGET', key, 'status', 'run')
      if f[2] == run and f[1] ~= 'RUNNING' and redis.call('HEXISTS', key, 'h' .. run) == 1 then res = f[1] end
    end
  end
  out[#out + 1] = res
end

if #ended > 0 then
  redis.call('HDEL', runs, unpack(ended))
  if redis.call('HLEN', KEYS[#KEYS]) > 0 then redis.call('HDEL', KEYS[#KEYS], unpack(ended)) end
end
if #packed > 0 then redis.call('HSET', fin, unpack(packed)) end
if #listed > 0 then
  list_done(info, done, listed)
  -- the finished tasks past the retention go, packed records with them
  prune_done(info, done, fin, string.format('%d', now - tonumber(retention)), 8)
end
for p, ids in pairs(acks) do
  if keepSucceeded then
    ack_trim(info, KEYS[8 + tonumber(p)], group, p, ids)
  else
    -- a succeeded task leaves no record to recognise a leftover entry by
    -- (a recreated group delivers those again): no entry is left
    redis.call('XACK', KEYS[8 + tonumber(p)], group, unpack(ids))
    redis.call('XDEL', KEYS[8 + tonumber(p)], unpack(ids))
  end
end
if succeeded > 0 then redis.call('HINCRBY', info, 'succeeded', succeeded) end
if deadN > 0 then redis.call('HINCRBY', info, 'dead', deadN) end
if cancelled > 0 then redis.call('HINCRBY', info, 'cancelled', cancelled) end
if retried > 0 then redis.call('HINCRBY', info, 'retried', retried) end
if retried > 0 or passedLater then redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1') end
order_publish(ARGV[#ARGV], nowS)
return out
