-- enqueue.lua: create a batch of tasks in one queue that need a check
-- inside Redis: an idempotency key, a delay or run-at, or a depth bound.
-- (A task without any of them is one plain XADD, see enqueue.go.)
--
-- KEYS[1]        schedule zset (task id -> due ms)
-- KEYS[2]        wakeup stream (the scheduler re-reads the earliest due time)
-- KEYS[3..12]    band streams of priority 0..9
-- KEYS[13]       gwait zset (tasks waiting for their group's turn)
-- KEYS[14]       gcount hash (per group: admitted entries not started)
-- KEYS[15]       info hash (fields b0..b9, for the depth bound)
-- KEYS[16]       ohold hash (per order key: the task in flight)
-- KEYS[17]       oline hash (the tasks waiting for their order keys)
-- KEYS[18]       oindex hash (the ordered tasks without a hash)
-- KEYS[19..]     task hashes and idempotency records, referenced by index below
--
-- ARGV[1]        max depth (queued + scheduled + running; 0 = unbounded)
-- ARGV[2]        idempotency window, ms (a record lives this long after creation,
--                and is extended to this long after the task finishes)
-- ARGV[3]        N; then 16 values per task:
--                random task id (used if it is scheduled or grouped), task
--                key index, idempotency key index (0 = none), request
--                fingerprint, type, payload, priority (0-9), max attempts,
--                timeout ms, run at (Unix ms, 0 = none), delay ms (0 =
--                none), group ("" = none), limit key ("" = none), the
--                submission's W3C traceparent ("" = none: entry field "x",
--                hash field "trace"), the task awaiting it ("<id> <step>",
--                "" = none: entry field "a", hash field "parent"), the
--                order key ("" = none)
--
-- A task due now is born as an entry of its band ("t" type, "p" payload,
-- "m" max attempts, "o" timeout ms, "k" idempotency record hash): its id is
-- derived from the entry's (the caller derives it). A task due later — run
-- at, or now + delay, on the Redis clock — is SCHEDULED: a hash under the
-- random id, in the schedule zset. A task with a group or a limit key gets
-- a hash under the random id too: due later it is SCHEDULED as above; due
-- now it is QUEUED, its entry written from its hash (readd; a group's task
-- is admitted to its band, lib.lua's admit, or waits in gwait). A task
-- with an order key, due now, without a group or a limit key has no hash
-- (light: oindex): it enters its band as an entry carrying "q" = its key
-- when it holds the key, else waits in oline, QUEUED, its oline value its
-- record (lib_order.lua's order_enter_light). Any other task with an order
-- key has a hash too, and enters so only when it holds its key
-- (order_enter); else it waits in oline, QUEUED.
-- Depth is what the bands hold (queued and running entries, not those
-- acknowledged and left for a later trim) plus the schedule and gwait
-- (lib.lua's queue_depth). An idempotency record holds
-- "<ref> <fingerprint>", ref being "=<band>:<entry id>" or the random id.
--
-- Returns 2 values per task — code, ref — then the Redis time (Unix ms).
-- Codes:
--    1  created as an entry: ref is "<band>:<entry id>"
--    3  created SCHEDULED: ref is the random id
--    4  created QUEUED with a hash (a group's or limit key's task), in its
--       band: ref is the random id
--    5  the same, waiting for its group's turn (in gwait)
--    6  created QUEUED, waiting for its order key (in oline): ref is the
--       random id (a light task, in its band, answers 4 as well)
--    2  idempotent replay: the key's record has the same fingerprint; ref
--       is the record's
--   -1  conflict: the key's record has another fingerprint; ref is the
--       record's
--   -2  queue full: depth would exceed max depth; nothing written

local schedule, wakeup, gwait, gcount, ohold, oline, oindex = KEYS[1], KEYS[2], KEYS[13], KEYS[14], KEYS[16], KEYS[17], KEYS[18]
local maxDepth = tonumber(ARGV[1])
local window = ARGV[2]
local n = tonumber(ARGV[3])

local now, nowS = now_ms()

-- waiter_line is the oline value's tail (lib_order.lua's order_line) of
-- the task at ARGV[a..], idempotency key index ik, created at nowS, of
-- kind kind (nil: "1" with a group, else "0").
local function waiter_line(a, ik, nowS, kind)
  local idem, lkey, trace, parent
  if ik > 0 then idem = string.sub(KEYS[ik], -64) end
  if ARGV[a + 12] ~= '' then lkey = ARGV[a + 12] end
  if ARGV[a + 13] ~= '' then trace = ARGV[a + 13] end
  if ARGV[a + 14] ~= '' then parent = ARGV[a + 14] end
  local s = { ARGV[a + 4], ARGV[a + 5], ARGV[a + 7], ARGV[a + 8], nowS, idem, nil, nil, lkey, nil, nil, nil, trace, parent }
  if not kind then
    kind = '0'
    if ARGV[a + 11] ~= '' then kind = '1' end
  end
  return order_line(ARGV[a + 6], kind, '0', s, 0)
end

local depth = 0
if maxDepth > 0 then depth = queue_depth(KEYS[15], 3, schedule, gwait) + redis.call('HLEN', oline) end
local added, scheduled = 0, 0
local out = {}
for i = 0, n - 1 do
  local a = 4 + i * 16
  local id, tk, ik, fp = ARGV[a], KEYS[tonumber(ARGV[a + 1])], tonumber(ARGV[a + 2]), ARGV[a + 3]
  local prio, runAt, delay, grp, lkey = ARGV[a + 6], ARGV[a + 9], ARGV[a + 10], ARGV[a + 11], ARGV[a + 12]
  local trace, parent, okey = ARGV[a + 13], ARGV[a + 14], ARGV[a + 15]
  local code, ret = nil, ''
  if ik > 0 then
    local v = redis.call('GET', KEYS[ik])
    if v then
      local oref, ofp = string.match(v, '^(%S+) (%S+)$')
      ret = oref
      if ofp == fp then code = 2 else code = -1 end
    end
  end
  if not code and maxDepth > 0 and depth + added >= maxDepth then
    code = -2
  end
  if not code then
    local due = 0
    if runAt ~= '0' then due = tonumber(runAt) end
    if delay ~= '0' then due = now + tonumber(delay) end
    local ref
    if due > now then
      local dueS = string.format('%d', due)
      redis.call('HSET', tk, 'type', ARGV[a + 4], 'payload', ARGV[a + 5], 'prio', prio, 'status', 'SCHEDULED',
        'max_att', ARGV[a + 7], 'timeout', ARGV[a + 8], 'created', nowS, 'due', dueS)
      if ik > 0 then redis.call('HSET', tk, 'idem', string.sub(KEYS[ik], -64)) end
      if grp ~= '' then redis.call('HSET', tk, 'group', grp) end
      if lkey ~= '' then redis.call('HSET', tk, 'lkey', lkey) end
      if trace ~= '' then redis.call('HSET', tk, 'trace', trace) end
      if parent ~= '' then redis.call('HSET', tk, 'parent', parent) end
      code, ret, ref = 3, id, id
      if okey ~= '' and not order_enter(ohold, oline, tk, string.sub(id, -26), okey, due, waiter_line(a, ik, nowS)) then
        redis.call('HDEL', tk, 'due')
        code = 6
      else
        redis.call('ZADD', schedule, dueS, id)
        scheduled = scheduled + 1
      end
    elseif okey ~= '' and grp == '' and lkey == '' then
      -- light: no hash (oindex)
      local idem = ''
      if ik > 0 then idem = string.sub(KEYS[ik], -64) end
      code, ret, ref = 4, id, id
      if not order_enter_light(ohold, oline, oindex, id, okey, prio, waiter_line(a, ik, nowS, '2'), 3,
          { ARGV[a + 4], ARGV[a + 5], ARGV[a + 7], ARGV[a + 8], nowS, idem, trace, parent }) then
        code = 6
      end
    elseif grp ~= '' or lkey ~= '' or okey ~= '' then
      redis.call('HSET', tk, 'type', ARGV[a + 4], 'payload', ARGV[a + 5], 'prio', prio, 'status', 'QUEUED',
        'max_att', ARGV[a + 7], 'timeout', ARGV[a + 8], 'created', nowS)
      if ik > 0 then redis.call('HSET', tk, 'idem', string.sub(KEYS[ik], -64)) end
      if lkey ~= '' then redis.call('HSET', tk, 'lkey', lkey) end
      if trace ~= '' then redis.call('HSET', tk, 'trace', trace) end
      if parent ~= '' then redis.call('HSET', tk, 'parent', parent) end
      code, ret, ref = 4, id, id
      if okey ~= '' and not order_enter(ohold, oline, tk, string.sub(id, -26), okey, 0, waiter_line(a, ik, nowS)) then
        if grp ~= '' then redis.call('HSET', tk, 'group', grp) end
        code = 6
      elseif grp == '' then
        readd(KEYS[3 + tonumber(prio)], tk, id)
      else
        redis.call('HSET', tk, 'group', grp)
        if not admit(KEYS[3 + tonumber(prio)], tk, id, grp, prio, gwait, gcount) then code = 5 end
      end
    else
      local f = { 't', ARGV[a + 4], 'p', ARGV[a + 5], 'm', ARGV[a + 7], 'o', ARGV[a + 8] }
      if ik > 0 then f[#f + 1], f[#f + 2] = 'k', string.sub(KEYS[ik], -64) end
      if trace ~= '' then f[#f + 1], f[#f + 2] = 'x', trace end
      if parent ~= '' then f[#f + 1], f[#f + 2] = 'a', parent end
      local eid = redis.call('XADD', KEYS[3 + tonumber(prio)], '*', unpack(f))
      code, ret = 1, prio .. ':' .. eid
      ref = '=' .. ret
    end
    if ik > 0 then
      redis.call('SET', KEYS[ik], ref .. ' ' .. fp, 'PX', window)
    end
    added = added + 1
  end
  out[#out + 1] = code
  out[#out + 1] = ret
end

if scheduled > 0 then
  redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
end
out[#out + 1] = now
return out
