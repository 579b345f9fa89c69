-- progress.lua: record the progress a running execution reports.
--
-- KEYS[1]        run hash (running tasks' state, by ULID)
-- KEYS[2]        progress hash (by ULID)
-- KEYS[3]        the band stream of the entry the execution runs from
--
-- ARGV[1]        the task's ULID
-- ARGV[2]        the run reporting (the fence)
-- ARGV[3]        the progress: "<fraction>|<note>"
-- ARGV[4]        consumer group
-- ARGV[5]        the execution's worker (its consumer)
-- ARGV[6]        its entry id
-- ARGV[7]        its start (Unix ms)
-- ARGV[8]        its band (0..9)
--
-- The progress is recorded, as "<run>|<Redis ms>|<fraction>|<note>", only
-- while the task runs under that run. An implicit first run (no Run
-- field: first_runs) gets its Run field here, as at its first renewal.
-- finish.lua deletes a finished task's; the scheduler deletes those of
-- tasks no longer running (a task ended by a takeover or a cancellation).
--
-- Returns 1 when recorded, 0 when the run is not the task's (stale).

local st = redis.call('HGET', KEYS[1], ARGV[1])
local run = ARGV[2]
if not st and run == '1' and ARGV[6] ~= '' then
  local firsts = {}
  first_runs(KEYS[3], ARGV[4], ARGV[5], {ARGV[6]}, firsts)
  if not firsts[ARGV[6]] then return 0 end
  st = run_value(implicit_state(ARGV[7], ARGV[5]))
  redis.call('HSET', KEYS[1], '~', run_pad(), ARGV[1], st)
end
if not st or string.sub(st, 1, #run + 1) ~= run .. '|' then return 0 end
local _, nowS = now_ms()
redis.call('HSET', KEYS[2], ARGV[1], run .. '|' .. nowS .. '|' .. ARGV[3])
return 1
