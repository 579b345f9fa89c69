-- lib_order.lua: ordered keys (EnqueueOpts.OrderKey): of the tasks of one
-- key, one at a time is in flight — queued, scheduled or running — and the
-- others wait in submission order; part of the store's library (lib.go).
--
-- ohold hash, per key with a task in flight: "<holder ULID>|<head>|<tail>|
-- <waiting>|<entry>" — its line is the fields "<key>|<n>" of the oline
-- hash, head <= n < tail (a waiter that left early leaves a gap), waiting
-- of them; entry is the band entry order_release wrote for the holder ("":
-- none; its hash has no "entry", order_entry).
-- oline hash, per waiter: "<due ms>|<ULID>|<prio>|<grouped 0/1>|<attempt>"
-- then, each after a newline, its type, max attempts, timeout, created,
-- idempotency hash, limit key, traceparent and awaiting parent ("" for
-- none; none holds a newline) and last its payload: all its hand-over needs
-- (one HGET and one match, no read of its hash) to write its entry into
-- its band. (An ordered task is never periodic nor a workflow's step:
-- those fields of an entry are not kept.)

-- order_line is the oline value's tail after the due time and ULID of a
-- task of priority prio, with or without a group, in attempt attempt,
-- whose hash fields (as readd reads them) are s[o+1..o+14].
local function order_line(prio, grouped, attempt, s, o)
  local g = '0'
  if grouped then g = '1' end
  return table.concat({ prio .. '|' .. g .. '|' .. attempt, s[o + 1], s[o + 3], s[o + 4], s[o + 5], s[o + 6] or '',
    s[o + 9] or '', s[o + 13] or '', s[o + 14] or '', s[o + 2] }, '\n')
end

-- ORDER_LINE matches an oline value: due, ULID, priority, grouped,
-- attempt, type, max attempts, timeout, created, idempotency hash, limit
-- key, traceparent, parent, payload.
local ORDER_LINE = '^(%d+)|([^|]+)|(%d)|(%d)|(%d+)\n([^\n]*)\n(%d*)\n(%d*)\n(%d*)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n(.*)$'

-- order_opt is s, or nil when it is "".
local function order_opt(s)
  if s == '' then return nil end
  return s
end

-- order_state parses ohold value h: holder, head, tail, waiting, entry.
local function order_state(h)
  local holder, head, tail, waiting, eid = string.match(h, '^([^|]*)|(%d+)|(%d+)|(%d+)|([^|]*)$')
  return holder, tonumber(head), tonumber(tail), tonumber(waiting), eid
end

-- order_set writes key okey's ohold value.
local function order_set(ohold, okey, holder, head, tail, waiting, eid)
  redis.call('HSET', ohold, okey, string.format('%s|%d|%d|%d|%s', holder, head, tail, waiting, eid))
end

-- order_enter enters new task ulid (hash tk, its fields written) of order
-- key okey, due at due (Unix ms, 0 = now), its oline value's tail line
-- (order_line): true when the key was free (or its own) — the task holds it
-- now and goes on as it would without a key — else it waits in oline,
-- QUEUED, its hash keeping its field there ("owait"), and false.
local function order_enter(ohold, oline, tk, ulid, okey, due, line)
  redis.call('HSET', tk, 'okey', okey)
  local h = redis.call('HGET', ohold, okey)
  if not h then
    redis.call('HSET', ohold, okey, ulid .. '|0|0|0|')
    return true
  end
  local holder, head, tail, waiting, eid = order_state(h)
  if holder == ulid then return true end
  local m = okey .. '|' .. string.format('%d', tail)
  redis.call('HSET', oline, m, string.format('%d', due) .. '|' .. ulid .. '|' .. line)
  order_set(ohold, okey, holder, head, tail + 1, waiting + 1, eid)
  redis.call('HSET', tk, 'owait', m, 'status', 'QUEUED')
  return false
end

-- order_events: of each task order_release wrote into its band, its id,
-- type, attempt and priority, for order_publish.
local order_events = {}

-- order_publish publishes on channel the QUEUED events (at Unix ms nowS) of
-- the tasks order_release wrote into their bands.
local function order_publish(channel, nowS)
  local e, out = order_events, {}
  for i = 1, #e, 4 do
    out[#out + 1] = e[i] .. '\tQUEUED\t' .. e[i + 1] .. '\t' .. e[i + 2] .. '\t' .. e[i + 3] .. '\t' .. nowS
  end
  if #out > 0 then redis.call('PUBLISH', channel, table.concat(out, '\n')) end
end

-- order_release passes order key okey on from task ulid once that task has
-- ended (nothing when it does not hold the key, or okey is nil): to the
-- key's first waiter, which leaves oline — due now and without a group, its
-- entry written into its band (KEYS[bands + its priority]) from its oline
-- value, its hash left as it was (QUEUED; its "owait" names a field gone
-- from oline, or another task's: readers check the ULID there); else it
-- enters the schedule zset (as "<queue>-<ULID>") due at its own due time or
-- now, so that the scheduler moves it into its band (promote.lua). With no
-- waiter the key is free. Returns true when the caller must wake the
-- scheduler (it scheduled the waiter).
local function order_release(ohold, oline, schedule, queue, okey, ulid, now, bands)
  if not okey then return false end
  local h = redis.call('HGET', ohold, okey)
  if not h then return false end
  local holder, head, tail, waiting = order_state(h)
  if holder ~= ulid then return false end
  while waiting > 0 and head < tail do
    local m = okey .. '|' .. string.format('%d', head)
    head = head + 1
    local v = redis.call('HGET', oline, m)
    if v then
      redis.call('HDEL', oline, m)
      waiting = waiting - 1
      local due, nu, prio, grouped, attempt, typ, max, timeout, created, idem, lkey, trace, parent, payload =
        string.match(v, ORDER_LINE)
      if due then -- (else not a waiter's value: skipped)
        local id = queue .. '-' .. nu
        due = tonumber(due)
        if due > now or grouped == '1' then
          order_set(ohold, okey, nu, head, tail, waiting, '')
          redis.call('ZADD', schedule, string.format('%d', math.max(now, due)), id)
          return true
        end
        local band, eid = KEYS[bands + tonumber(prio)], nil
        if idem == '' and lkey == '' and trace == '' and parent == '' then
          -- (readd_entry's entry, without building it: most have none of those)
          eid = redis.call('XADD', band, '*', 'i', id, 't', typ, 'p', payload, 'm', max, 'o', timeout, 'c', created)
        else
          eid = readd_entry(band, id, { typ, payload, max, timeout, created, order_opt(idem), nil, nil, order_opt(lkey),
            nil, nil, nil, order_opt(trace), order_opt(parent) }, 0)
        end
        order_set(ohold, okey, nu, head, tail, waiting, eid)
        local e = order_events
        e[#e + 1], e[#e + 2], e[#e + 3], e[#e + 4] = id, typ, attempt, prio
        return false
      end
    end
  end
  redis.call('HDEL', ohold, okey)
  return false
end

-- order_waiting reports whether task ulid waits in oline under field m
-- (its hash's "owait", or nil).
local function order_waiting(oline, m, ulid)
  if not m then return false end
  local v = redis.call('HGET', oline, m)
  return v and string.match(v, '^%d+|([^|]+)|') == ulid
end

-- order_leave takes task ulid (hash tk) out of its order key as it ends
-- without running to its end (cancelled): a waiter leaves oline; the
-- holder passes the key on (order_release). Returns true when the caller
-- must wake the scheduler.
local function order_leave(ohold, oline, schedule, queue, tk, ulid, now, bands)
  local f = redis.call('HMGET', tk, 'okey', 'owait')
  if not f[1] then return false end
  if order_waiting(oline, f[2], ulid) then
    redis.call('HDEL', oline, f[2])
    redis.call('HDEL', tk, 'owait')
    local h = redis.call('HGET', ohold, f[1])
    if h then
      local holder, head, tail, waiting, eid = order_state(h)
      order_set(ohold, f[1], holder, head, tail, waiting - 1, eid)
    end
    return false
  end
  return order_release(ohold, oline, schedule, queue, f[1], ulid, now, bands)
end

-- order_entry returns the id of the band entry order_release wrote for
-- task ulid as it passed the task's order key okey to it, while the task
-- holds the key; else nil.
local function order_entry(ohold, okey, ulid)
  local h = redis.call('HGET', ohold, okey)
  if not h then return nil end
  local holder, _, _, _, eid = order_state(h)
  if holder ~= ulid or eid == '' then return nil end
  return eid
end
