-- runnow.lua: run one task of the schedule now — what promote.lua does when
-- its due time comes, at once (Admin.RunNow).
--
-- KEYS[1]        schedule zset
-- KEYS[2..11]    band streams of priority 0..9
-- KEYS[12]       gwait zset (tasks waiting for their group's turn)
-- KEYS[13]       gcount hash (per group: admitted entries not started)
-- KEYS[14]       the task hash
-- KEYS[15]       the task's steps hash (Keys.Steps)
-- KEYS[16]       suspended zset (Keys.Suspended)
--
-- ARGV[1]        events channel
-- ARGV[2]        the task id
-- ARGV[3]        how long a steps hash made here is kept, ms
--
-- The task moves if it is in the schedule and SCHEDULED — delayed, waiting
-- out a retry's backoff, suspended (a Sleep ends now: its step record,
-- dtq.Sleep's JSON, gets "run_now_ms":<Redis ms> first; a WaitFor ends as
-- timed out) or debounced (it runs
-- with the payload it has; a later submission of its debounce identity
-- makes a new task) — or QUEUED with its order key passed to it and its
-- own delay still ahead: an entry in its band, status QUEUED, as
-- lib_group.lua's promote_task makes it, and it leaves the schedule. A
-- task waiting for its order key (in owait, not in the schedule) or in any
-- other state does not move. The scheduler's next wait may wake for
-- nothing (it finds the task gone from the schedule).
--
-- Returns {1} when it moved the task, else {0, its status} ("" when it has
-- no hash: a task born as an entry — QUEUED — or none).

local schedule, tk, id = KEYS[1], KEYS[14], ARGV[2]
local f = redis.call('HMGET', tk, 'status', 'prio', 'type', 'attempt', 'group', 'wait', 'owait')
if not redis.call('ZSCORE', schedule, id) or not (f[1] == 'SCHEDULED' or (f[1] == 'QUEUED' and f[7])) then
  return { 0, f[1] or '' }
end
local _, nowS = now_ms()
local slept = f[6] and string.match(f[6], '^sleep (.*)$')
if slept then
  -- the sleep's record (dtq.Sleep's JSON) says it ended now
  local rec = redis.call('HGET', KEYS[15], slept)
  local head, body = string.match(rec or '', '^([^|]*|[^|]*|){(.*)$')
  if head then redis.call('HSET', KEYS[15], slept, head .. '{"run_now_ms":' .. nowS .. ',' .. body) end
end
local event = promote_task(2, tk, KEYS[15], id, f, KEYS[12], KEYS[13], KEYS[16], ARGV[3], nowS)
redis.call('ZREM', schedule, id)
redis.call('PUBLISH', ARGV[1], event)
return { 1 }
