-- progress.lua: record the progress a running execution reports.
--
-- KEYS[1]        run hash (running tasks' state, by ULID)
-- KEYS[2]        progress hash (by ULID)
--
-- ARGV[1]        the task's ULID
-- ARGV[2]        the run reporting (the fence)
-- ARGV[3]        the progress: "<fraction>|<note>"
--
-- The progress is recorded, as "<run>|<Redis ms>|<fraction>|<note>", only
-- while the task runs under that run. finish.lua deletes a finished
-- task's; the scheduler deletes those of tasks no longer running (a task
-- ended by a takeover or a cancellation).
--
-- Returns 1 when recorded, 0 when the run is not the task's (stale).

local st = redis.call('HGET', KEYS[1], ARGV[1])
local run = ARGV[2]
if not st or string.sub(st, 1, #run + 1) ~= run .. '|' then return 0 end
local _, nowS = now_ms()
redis.call('HSET', KEYS[2], ARGV[1], run .. '|' .. nowS .. '|' .. ARGV[3])
return 1
