-- lib_order.lua: ordered keys (EnqueueOpts.OrderKey): of the tasks of one
-- key, one at a time is in flight — queued, scheduled or running — and the
-- others wait in submission order; part of the store's library (lib.go).
--
-- ohold hash, per key with a task in flight: "<holder ULID>|<head>|<tail>|
-- <waiting>|<entry>" — its line is the fields "<key>|<n>" of the oline
-- hash, head <= n < tail (a waiter that left early leaves a gap), waiting
-- of them; entry is the band entry written for the holder as it got the
-- key (by order_release, or order_enter_light; "": none — its hash has an
-- "entry" then, or it has none yet; order_entry).
-- oline hash, per waiter: "<due ms>|<ULID>|<prio>|<kind>|<attempt>" then,
-- each after a newline, its type, max attempts, timeout, created,
-- idempotency hash, limit key, traceparent and awaiting parent ("" for
-- none; none holds a newline) and last its payload: all its hand-over needs
-- (one HGET and one match) to write its entry into its band. Kind 0: a
-- task with a hash (QUEUED, its "owait" naming its field), 1: the same
-- with a group, 2: a light task — no hash: the value is its record.
-- oindex hash, per light task (submitted with an order key, due now,
-- without a group or a limit key) waiting or in flight: ULID ->
-- "<prio>|<n>|<key>" (n its oline field's, "" when it got its key at its
-- submission). A light task's entry carries "q" = its key; it gets a hash
-- only on a rare path (copy_spec: a crash, a give-back, a held start, a
-- retry, a cancellation) and its field leaves oindex as its key passes on.
-- (An ordered task is never periodic nor a workflow's step: those fields
-- of an entry are not kept.)

-- order_line is the oline value's tail after the due time and ULID of a
-- task of priority prio and kind kind ("0" with a hash, "1" with a hash
-- and a group, "2" light), in attempt attempt, whose hash fields (as readd
-- reads them) are s[o+1..o+14].
local function order_line(prio, kind, attempt, s, o)
  return table.concat({ prio .. '|' .. kind .. '|' .. attempt, s[o + 1], s[o + 3], s[o + 4], s[o + 5], s[o + 6] or '',
    s[o + 9] or '', s[o + 13] or '', s[o + 14] or '', s[o + 2] }, '\n')
end

-- ORDER_LINE matches an oline value: due, ULID, priority, kind, attempt, type, max attempts, timeout, created, idempotency hash, limit
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

-- order_light_entry appends light task id's entry (order key okey) to
-- band: type typ, payload, max attempts, timeout ms, created (Unix ms),
-- and its idempotency hash, traceparent and awaiting parent ("" for
-- none). Returns the entry's id.
local function order_light_entry(band, id, okey, typ, payload, max, timeout, created, idem, trace, parent)
  local f = { 'i', id, 't', typ, 'p', payload, 'm', max, 'o', timeout, 'c', created, 'q', okey }
  if idem ~= '' then f[#f + 1], f[#f + 2] = 'k', idem end
  if trace ~= '' then f[#f + 1], f[#f + 2] = 'x', trace end
  if parent ~= '' then f[#f + 1], f[#f + 2] = 'a', parent end
  return redis.call('XADD', band, '*', unpack(f))
end

-- order_enter_light enters light task id (no hash: oindex) of order key
-- okey and priority prio into its band (KEYS[bands + prio]) when the key is
-- free — true — else at the tail of the key's line — false —, its oline
-- value's tail line (order_line, kind "2"); s holds its type, payload, max
-- attempts, timeout, created, idempotency hash, traceparent and parent
-- ("" for none).
local function order_enter_light(ohold, oline, oindex, id, okey, prio, line, bands, s)
  local ulid = string.sub(id, -26)
  local h = redis.call('HGET', ohold, okey)
  if not h then
    local eid = order_light_entry(KEYS[bands + tonumber(prio)], id, okey, s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8])
    redis.call('HSET', ohold, okey, ulid .. '|0|0|0|' .. eid)
    redis.call('HSET', oindex, ulid, prio .. '||' .. okey)
    return true
  end
  local holder, head, tail, waiting, eid = order_state(h)
  local n = string.format('%d', tail)
  redis.call('HSET', oline, okey .. '|' .. n, '0|' .. ulid .. '|' .. line)
  order_set(ohold, okey, holder, head, tail + 1, waiting + 1, eid)
  redis.call('HSET', oindex, ulid, prio .. '|' .. n .. '|' .. okey)
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
-- ended (nothing when it does not hold the key, or okey is nil; its oindex
-- field goes): to the key's first waiter, which leaves oline — due now and
-- without a group, its entry written into its band (KEYS[bands + its
-- priority]) from its oline value (a light one's with "q"), a hash left as
-- it was (QUEUED; its "owait" names a field gone from oline, or another
-- task's: readers check the ULID there); else it enters the schedule zset
-- (as "<queue>-<ULID>") due at its own due time or now, so that the
-- scheduler moves it into its band (promote.lua). With no waiter the key
-- is free. Returns true when the caller must wake the scheduler (it
-- scheduled the waiter).
local function order_release(ohold, oline, oindex, schedule, queue, okey, ulid, now, bands)
  if not okey then return false end
  local h = redis.call('HGET', ohold, okey)
  if not h then return false end
  local holder, head, tail, waiting = order_state(h)
  if holder ~= ulid then return false end
  redis.call('HDEL', oindex, ulid)
  while waiting > 0 and head < tail do
    local m = okey .. '|' .. string.format('%d', head)
    head = head + 1
    local v = redis.call('HGET', oline, m)
    if v then
      redis.call('HDEL', oline, m)
      waiting = waiting - 1
      local due, nu, prio, kind, attempt, typ, max, timeout, created, idem, lkey, trace, parent, payload =
        string.match(v, ORDER_LINE)
      if due then -- (else not a waiter's value: skipped)
        local id = queue .. '-' .. nu
        due = tonumber(due)
        if kind ~= '2' and (due > now or kind == '1') then
          order_set(ohold, okey, nu, head, tail, waiting, '')
          redis.call('ZADD', schedule, string.format('%d', math.max(now, due)), id)
          return true
        end
        local band, eid = KEYS[bands + tonumber(prio)], nil
        if kind == '2' then
          eid = order_light_entry(band, id, okey, typ, payload, max, timeout, created, idem, trace, parent)
        elseif idem == '' and lkey == '' and trace == '' and parent == '' then
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

-- order_waiting returns task ulid's oline value when it waits there under
-- field m (its hash's "owait", its oindex position; or nil), else false.
local function order_waiting(oline, m, ulid)
  if not m then return false end
  local v = redis.call('HGET', oline, m)
  return v and string.match(v, '^%d+|([^|]+)|') == ulid and v
end

-- order_leave takes task ulid (hash tk) out of its order key as it ends
-- without running to its end (cancelled): a waiter leaves oline (and
-- oindex); the holder passes the key on (order_release). Returns true
-- when the caller must wake the scheduler.
local function order_leave(ohold, oline, oindex, schedule, queue, tk, ulid, now, bands)
  local f = redis.call('HMGET', tk, 'okey', 'owait')
  if not f[1] then return false end
  if order_waiting(oline, f[2], ulid) then
    redis.call('HDEL', oline, f[2])
    redis.call('HDEL', tk, 'owait')
    redis.call('HDEL', oindex, ulid)
    local h = redis.call('HGET', ohold, f[1])
    if h then
      local holder, head, tail, waiting, eid = order_state(h)
      order_set(ohold, f[1], holder, head, tail, waiting - 1, eid)
    end
    return false
  end
  return order_release(ohold, oline, oindex, schedule, queue, f[1], ulid, now, bands)
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

-- order_light_find finds light task ulid (oindex): "wait", its priority,
-- key, oline field and value while it waits in its key's line; "held", its
-- priority, key and the id of the band entry written for it ("" or nil
-- when none) while it holds its key; nil when it is neither (not a light
-- task, or ended).
local function order_light_find(ohold, oline, oindex, ulid)
  local x = redis.call('HGET', oindex, ulid)
  if not x then return nil end
  local prio, n, okey = string.match(x, '^(%d)|(%d*)|(.+)$')
  if not prio then return nil end
  if n ~= '' then
    local m = okey .. '|' .. n
    local v = order_waiting(oline, m, ulid)
    if v then return 'wait', prio, okey, m, v end
  end
  local h = redis.call('HGET', ohold, okey)
  if not h then return nil end
  local holder, _, _, _, eid = order_state(h)
  if holder ~= ulid then return nil end
  return 'held', prio, okey, eid
end

-- order_light_hash writes the hash tk of a light task waiting in oline
-- under field m with value v (key okey): QUEUED, waiting there (its
-- "owait"), as a task with a hash would be. Returns its type.
local function order_light_hash(tk, okey, m, v)
  local _, _, prio, _, attempt, typ, max, timeout, created, idem, _, trace, parent, payload = string.match(v, ORDER_LINE)
  if not prio then return nil end
  redis.call('HSET', tk, 'type', typ, 'payload', payload, 'prio', prio, 'max_att', max, 'timeout', timeout, 'created', created,
    'attempt', attempt, 'okey', okey, 'owait', m, 'status', 'QUEUED')
  if idem ~= '' then redis.call('HSET', tk, 'idem', idem) end
  if trace ~= '' then redis.call('HSET', tk, 'trace', trace) end
  if parent ~= '' then redis.call('HSET', tk, 'parent', parent) end
  return typ
end
