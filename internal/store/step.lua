-- step.lua: record the result of a durable step of a running execution
-- (dtq.Step), once.
--
-- KEYS[1]        run hash (running tasks' state, by ULID)
-- KEYS[2]        the task's steps hash (Keys.Steps)
-- KEYS[3]        the band stream of the entry the execution runs from
--
-- ARGV[1]        the task's ULID
-- ARGV[2]        the run recording (the fence)
-- ARGV[3]        the step's name
-- ARGV[4]        its result
-- ARGV[5]        consumer group
-- ARGV[6]        the execution's worker (its consumer)
-- ARGV[7]        its entry id
-- ARGV[8]        its start (Unix ms)
-- ARGV[9]        how long the records are kept from now (ms)
--
-- The result is recorded, as "<run>|<Redis ms>|<result>", only while the
-- task runs under that run, and only if no execution recorded the step
-- before (the first record stands: a step is recorded exactly once). An
-- implicit first run (no Run field: first_runs) gets its Run field here,
-- as at its first renewal (progress.lua does the same).
--
-- Returns {1} when recorded, {2, value} when the step was recorded
-- already (its value), {0} when the run is not the task's (stale).

local st = redis.call('HGET', KEYS[1], ARGV[1])
local run = ARGV[2]
if not st and run == '1' and ARGV[7] ~= '' then
  local firsts = {}
  first_runs(KEYS[3], ARGV[5], ARGV[6], {ARGV[7]}, firsts)
  if not firsts[ARGV[7]] then return {0} end
  st = run_value(implicit_state(ARGV[8], ARGV[6]))
  redis.call('HSET', KEYS[1], '~', run_pad(), ARGV[1], st)
end
if not st or string.sub(st, 1, #run + 1) ~= run .. '|' then return {0} end
local had = redis.call('HGET', KEYS[2], ARGV[3])
if had then return {2, had} end
local _, nowS = now_ms()
redis.call('HSET', KEYS[2], ARGV[3], run .. '|' .. nowS .. '|' .. ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
return {1}
