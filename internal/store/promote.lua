-- promote.lua: move due SCHEDULED tasks to their band streams.
--
-- KEYS[1]        schedule zset
-- KEYS[2..11]    band streams of priority 0..9
-- KEYS[12]       gwait zset (tasks waiting for their group's turn)
-- KEYS[13]       gcount hash (per group: admitted entries not started)
-- KEYS[14..]     the task hash of each candidate, in order, then the
--                steps hash of each (Keys.Steps), then the suspended zset
--
-- ARGV[1]        events channel
-- ARGV[2]        N; then the N candidate task ids (the earliest of the
--                schedule); then how long a steps hash made here is kept, ms
--
-- A candidate is promoted if its due time (its score) has passed on the
-- Redis clock and it is still SCHEDULED — or QUEUED with its order key
-- passed to it (its "owait" member, which lib_order.lua's order_release
-- took out of owait, goes) —: an entry in its band, status QUEUED
-- (lib_group.lua's promote_task: a task with a group enters under its
-- group's window, or waits in gwait; a suspended task stops waiting, one
-- waiting for a signal that did not come with the record of its timeout).
-- A candidate no longer SCHEDULED (cancelled meanwhile) leaves the schedule.
--
-- Returns { promoted, ms until the earliest remaining due time (-1 = none) }.

local schedule = KEYS[1]
local channel = ARGV[1]
local n = tonumber(ARGV[2])

local now, nowS = now_ms()

local promoted, events = 0, {}
for i = 0, n - 1 do
  local id, tk = ARGV[3 + i], KEYS[14 + i]
  local due = redis.call('ZSCORE', schedule, id)
  if due and tonumber(due) <= now then
    local f = redis.call('HMGET', tk, 'status', 'prio', 'type', 'attempt', 'group', 'wait', 'owait')
    if f[1] == 'SCHEDULED' or (f[1] == 'QUEUED' and f[7]) then
      events[#events + 1] = promote_task(2, tk, KEYS[14 + n + i], id, f, KEYS[12], KEYS[13], KEYS[14 + 2 * n], ARGV[3 + n], nowS)
      promoted = promoted + 1
    else
      redis.call('ZREM', KEYS[14 + 2 * n], id) -- (ended meanwhile: a suspended one leaves that set too)
    end
    redis.call('ZREM', schedule, id)
  end
end
if promoted > 0 then
  redis.call('PUBLISH', channel, table.concat(events, '\n'))
end
local next = redis.call('ZRANGE', schedule, 0, 0, 'WITHSCORES')
if #next == 0 then return { promoted, -1 } end
return { promoted, math.max(0, tonumber(next[2]) - now) }
