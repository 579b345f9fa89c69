-- lib.lua: functions shared by the store's scripts, prepended to each of
-- them (script text stays constant). Field names follow schema.go.

-- run_pad returns the value of the run hash's field RunPad (schema.go):
-- longer than Redis's hash-max-listpack-value (64 bytes by default), it
-- keeps the hash a hashtable. Holding the running tasks (~100 fields), a
-- listpack finds each field by a linear scan: ~1.2 µs per field per
-- command, ~4 µs per task over a start and a finish.
local function run_pad() return string.rep('-', 256) end

-- now_ms returns the Redis time in Unix ms, as a number and as a string.
local function now_ms()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  return now, string.format('%d', now)
end

-- entry_fields returns the fields of band entry eid as a table, or nil
-- when the entry is gone.
local function entry_fields(band, eid)
  local e = redis.call('XRANGE', band, eid, eid)
  if #e == 0 then return nil end
  local f, m = e[1][2], {}
  for j = 1, #f, 2 do m[f[j]] = f[j + 1] end
  return m
end

-- copy_spec writes into task hash tk the immutable fields of a task born
-- as entry eid of a band of priority prio, or of a light ordered task's
-- entry there (its order key and creation in it: lib_order.lua): its
-- record is made from the entry (which is about to go). Returns the task's
-- type, or nil when the entry is gone.
local function copy_spec(tk, band, eid, prio)
  local m = entry_fields(band, eid)
  if not m then return nil end
  local created = m['c'] or string.match(eid, '^(%d+)-')
  redis.call('HSET', tk, 'type', m['t'], 'payload', m['p'], 'prio', prio, 'max_att', m['m'],
    'timeout', m['o'], 'created', created)
  if m['q'] then redis.call('HSET', tk, 'okey', m['q']) end
  if m['k'] then redis.call('HSET', tk, 'idem', m['k']) end
  if m['w'] then
    redis.call('HSET', tk, 'wf', m['w'], 'wstep', m['n'])
    if m['v'] then redis.call('HSET', tk, 'prev', m['v']) end
  end
  if m['x'] then redis.call('HSET', tk, 'trace', m['x']) end
  if m['a'] then redis.call('HSET', tk, 'parent', m['a']) end
  return m['t']
end

-- readd_entry appends task id's entry to band from s[o+1..o+14], the
-- values of its hash's fields type, payload, max_att, timeout, created,
-- idem, sched, tick, lkey, wf, wstep, prev, trace, parent (as readd reads
-- them), and returns the entry's id; with group, the entry is one
-- admitted under that group's window.
local function readd_entry(band, id, s, o, group)
  local f = { 'i', id, 't', s[o + 1], 'p', s[o + 2], 'm', s[o + 3], 'o', s[o + 4], 'c', s[o + 5] }
  if s[o + 6] then f[#f + 1], f[#f + 2] = 'k', s[o + 6] end
  if s[o + 7] then f[#f + 1], f[#f + 2], f[#f + 3], f[#f + 4] = 's', s[o + 7], 'g', s[o + 8] or '0' end
  if s[o + 9] then f[#f + 1], f[#f + 2] = 'l', s[o + 9] end
  if s[o + 10] then f[#f + 1], f[#f + 2], f[#f + 3], f[#f + 4] = 'w', s[o + 10], 'n', s[o + 11] or '0' end
  if s[o + 12] then f[#f + 1], f[#f + 2] = 'v', s[o + 12] end
  if s[o + 13] then f[#f + 1], f[#f + 2] = 'x', s[o + 13] end
  if s[o + 14] then f[#f + 1], f[#f + 2] = 'a', s[o + 14] end
  if group then f[#f + 1], f[#f + 2] = 'f', group end
  return redis.call('XADD', band, '*', unpack(f))
end

-- readd appends task id's entry to band from its hash (type, payload, max
-- attempts, timeout, created, and the idempotency hash, the schedule tick
-- that fired it, its limit key, its workflow step, its trace and the task
-- awaiting it when it has them), and notes the entry's id in the hash ("entry": cancel.lua deletes
-- the entry of a task cancelled while it waits there).
-- With group, the entry is one admitted under that group's window: it
-- carries "f" = group.
local function readd(band, tk, id, group)
  local s = redis.call('HMGET', tk, 'type', 'payload', 'max_att', 'timeout', 'created', 'idem', 'sched', 'tick', 'lkey',
    'wf', 'wstep', 'prev', 'trace', 'parent')
  redis.call('HSET', tk, 'entry', readd_entry(band, id, s, 0, group))
end

