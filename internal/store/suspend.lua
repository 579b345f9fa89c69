-- suspend.lua: end a running execution without failing it — the task
-- waits SCHEDULED (a durable sleep, a wait for a signal) and runs again
-- when it is due, its attempt kept (dtq.Sleep, dtq.WaitFor).
--
-- KEYS[1]        run hash (running tasks' state, by ULID)
-- KEYS[2]        the task hash
-- KEYS[3]        the task's steps hash (Keys.Steps)
-- KEYS[4]        the band stream of the entry the execution runs from
-- KEYS[5]        schedule zset
-- KEYS[6]        wakeup stream (the scheduler re-reads the earliest due time)
-- KEYS[7]        progress hash (the reports of running executions, by ULID)
-- KEYS[8]        suspended zset (Keys.Suspended)
--
-- ARGV[1]        the task's ULID
-- ARGV[2]        the run suspending (the fence)
-- ARGV[3]        consumer group
-- ARGV[4]        the execution's worker (its consumer)
-- ARGV[5]        its entry id
-- ARGV[6]        its start (Unix ms)
-- ARGV[7]        its band (0..9: the task's priority)
-- ARGV[8]        what it waits for: "sleep <step>" or "signal <name>"
-- ARGV[9]        how long, ms (the sleep's rest, the wait's timeout)
-- ARGV[10]       the queue's name (a task's id is "<queue>-<ULID>")
-- ARGV[11]       how long the step records are kept after the wait, ms
--
-- Only while the task runs under that run (an implicit first run — no Run
-- field: first_runs — is fenced by its pending entry, as in step.lua).
-- The run ends in its history ("suspend", what it waits for), its Run
-- field and progress go, its entry is acknowledged and deleted (a task
-- born as its entry gets its hash from it first), and the task is
-- SCHEDULED: due then, "wait" saying for what, "resume" telling its next
-- start to keep its attempt. A wait whose signal is recorded already (a
-- step record of its name: signal.lua) is due at once. The step records
-- stay for the wait and StepKeep after.
--
-- Returns {1, due ms} when suspended, {2} when its cancellation was
-- requested (nothing changed: the caller records the run CANCELLED), {0}
-- when the run is not the task's (stale).

local runs, tk, steps, band, schedule, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local ulid, run, group, worker, eid, started = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local prio, what, wait, queue, keep = ARGV[7], ARGV[8], tonumber(ARGV[9]), ARGV[10], tonumber(ARGV[11])

local st = redis.call('HGET', runs, ulid)
if not st and run == '1' and eid ~= '' then
  local firsts = {}
  first_runs(band, group, worker, {eid}, firsts)
  if not firsts[eid] then return {0} end
  st = run_value(implicit_state(started, worker))
end
if not st or string.sub(st, 1, #run + 1) ~= run .. '|' then return {0} end
local rs = run_state(st)
if rs.cancel == '1' then return {2} end

local now, nowS = now_ms()
if redis.call('HEXISTS', tk, 'type') == 0 then copy_spec(tk, band, eid, prio) end
local name = string.match(what, '^signal (.*)$')
if name and redis.call('HEXISTS', steps, name) == 1 then wait = 0 end
local due = string.format('%d', now + wait)
redis.call('HSET', tk, 'status', 'SCHEDULED', 'run', run, 'attempt', rs.attempt, 'crashes', rs.crashes,
  'started', rs.started, 'worker', worker, 'due', due, 'wait', what, 'resume', '1',
  'h' .. run, rs.started .. '|' .. nowS .. '|' .. worker .. '|suspend|' .. what)
redis.call('HDEL', runs, ulid)
redis.call('HDEL', KEYS[7], ulid)
ack_del(band, group, eid)
redis.call('ZADD', schedule, due, queue .. '-' .. ulid)
redis.call('ZADD', KEYS[8], due, queue .. '-' .. ulid)
redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
if redis.call('EXISTS', steps) == 1 then redis.call('PEXPIRE', steps, wait + keep) end
return {1, due}
