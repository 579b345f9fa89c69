-- opromote.lua: move the tasks ended tasks passed their order keys to
-- (finish.lua's answer, lib_order.lua's order_release) from the schedule
-- into their bands at once — promote.lua's work for these, in fewer
-- commands: a task that waited for its order key has no suspension, and
-- is due now.
--
-- KEYS[1]        schedule zset
-- KEYS[2..11]    band streams of priority 0..9
-- KEYS[12]       gwait zset (tasks waiting for their group's turn)
-- KEYS[13]       gcount hash (per group: admitted entries not started)
-- KEYS[14..]     the task hash of each id, in order
--
-- ARGV[1]        events channel
-- ARGV[2]        N; then the N task ids
--
-- An id still in the schedule whose task is QUEUED with its "owait"
-- member leaves the schedule and enters its band (a task with a group
-- under its group's window, lib_group.lua's admit); any other id is left
-- as it is (the scheduler's promote.lua took it first, or it was
-- cancelled: promote.lua drops it from the schedule). Returns the number
-- moved.

local schedule = KEYS[1]
local n = tonumber(ARGV[2])
local _, nowS = now_ms()

local moved, events = 0, {}
for i = 0, n - 1 do
  local id, tk = ARGV[3 + i], KEYS[14 + i]
  local s = redis.call('HMGET', tk, 'status', 'prio', 'owait', 'group', 'attempt',
    'type', 'payload', 'max_att', 'timeout', 'created', 'idem', 'sched', 'tick', 'lkey', 'wf', 'wstep', 'prev', 'trace', 'parent')
  if s[1] == 'QUEUED' and s[3] and redis.call('ZREM', schedule, id) == 1 then
    local band = KEYS[2 + tonumber(s[2])]
    redis.call('HDEL', tk, 'owait')
    if s[4] then
      admit(band, tk, id, s[4], s[2], KEYS[12], KEYS[13])
    else
      redis.call('HSET', tk, 'entry', readd_entry(band, id, s, 5))
    end
    moved = moved + 1
    events[#events + 1] = id .. '\tQUEUED\t' .. s[6] .. '\t' .. (s[5] or '0') .. '\t' .. s[2] .. '\t' .. nowS
  end
end
if moved > 0 then redis.call('PUBLISH', ARGV[1], table.concat(events, '\n')) end
return moved
