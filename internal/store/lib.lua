-- lib.lua: functions shared by the store's scripts, prepended to each of
-- them (script text stays constant). Field names follow schema.go.

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
-- as entry eid of a band of priority prio: its record is made from the
-- entry (which is about to go). Returns the task's type, or nil when the
-- entry is gone.
local function copy_spec(tk, band, eid, prio)
  local m = entry_fields(band, eid)
  if not m then return nil end
  local created = string.match(eid, '^(%d+)-')
  redis.call('HSET', tk, 'type', m['t'], 'payload', m['p'], 'prio', prio, 'max_att', m['m'],
    'timeout', m['o'], 'created', created)
  if m['k'] then redis.call('HSET', tk, 'idem', m['k']) end
  return m['t']
end

-- readd appends task id's entry to band from its hash (type, payload, max
-- attempts, timeout, created, idempotency hash).
local function readd(band, tk, id)
  local s = redis.call('HMGET', tk, 'type', 'payload', 'max_att', 'timeout', 'created', 'idem')
  if s[6] then
    redis.call('XADD', band, '*', 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5], 'k', s[6])
  else
    redis.call('XADD', band, '*', 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5])
  end
end

-- ack_del acknowledges and deletes band entry eid.
local function ack_del(band, group, eid)
  redis.call('XACK', band, group, eid)
  redis.call('XDEL', band, eid)
end
