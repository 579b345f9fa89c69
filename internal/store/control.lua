-- control.lua: ask a live worker to quiet (take no more tasks) or stop
-- (Admin.QuietWorker, Admin.StopWorker).
--
-- KEYS[1]        the worker's heartbeat hash (WorkerKey)
--
-- ARGV[1]        what is asked: "quiet" or "stop"
-- ARGV[2]        the worker control channel (WorkerControlChannel)
-- ARGV[3]        the worker's id
--
-- A worker whose hash has expired (or never was) is not live: nothing is
-- written (no hash without its time to live). A lease holder's (kind
-- "http") takes no control: nothing is written. Else the hash's "control"
-- field records the request — a stop is never turned back into a quiet —
-- and "<id> <request>" is published on the channel; the worker reads the
-- field at its next heartbeat too, should it miss the message.
--
-- Returns {1, what is recorded ("quiet" or "stop")}, {0} for no live
-- worker, {2} for a lease holder.

local wk = KEYS[1]
if redis.call('EXISTS', wk) == 0 then return {0} end
if redis.call('HGET', wk, 'kind') == 'http' then return {2} end
local ask = ARGV[1]
if ask == 'quiet' and redis.call('HGET', wk, 'control') == 'stop' then ask = 'stop' end
redis.call('HSET', wk, 'control', ask)
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ' ' .. ask)
return {1, ask}
