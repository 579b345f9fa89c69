-- drop.lua: delete a queue (Client.DeleteQueue): every key of it that is
-- one per queue, in one atomic step, unless it still holds work and the
-- caller did not force it. The keys of single tasks (task hashes,
-- idempotency records, operation records) are left to drop_sweep.lua,
-- which the caller runs next on what a SCAN finds.
--
-- KEYS[1]        info hash (fields b0..b9: acknowledged entries still there)
-- KEYS[2]        schedule zset
-- KEYS[3]        run hash
-- KEYS[4]        dead-letter stream
-- KEYS[5..14]    band streams of priority 0..9
-- KEYS[15]       gwait zset (QUEUED tasks waiting for their group's turn)
-- KEYS[16]       limwait zset (QUEUED tasks a scoped limit holds back)
-- KEYS[17..]     the queue's other keys of one per queue: deleted too
--
-- ARGV[1]        consumer group
-- ARGV[2]        "1": delete whatever the queue holds; "0": only when it
--                holds no QUEUED, SCHEDULED, RUNNING or DEAD task
--
-- Returns {deleted, queued, scheduled, running, dead, now}: deleted is 1
-- when the keys were deleted, 0 when the queue holds work and ARGV[2] is
-- "0" (nothing changed); the counts are what the queue held; now is the
-- Redis time (Unix ms) of the deletion.

local info, schedule, dlq = KEYS[1], KEYS[2], KEYS[4]
local group, force = ARGV[1], ARGV[2] == '1'
local queued, running = 0, 0
for p = 0, 9 do
  local band = KEYS[5 + p]
  local n = redis.call('XLEN', band)
  if n > 0 then
    local pend = 0
    local ok, r = pcall(redis.call, 'XPENDING', band, group)
    if ok then pend = tonumber(r[1]) end
    local behind = math.max(0, tonumber(redis.call('HGET', info, 'b' .. p) or '0'))
    queued = queued + math.max(0, n - pend - behind)
    running = running + pend
  end
end
queued = queued + redis.call('ZCARD', KEYS[15]) + redis.call('ZCARD', KEYS[16])
local scheduled = redis.call('ZCARD', schedule)
local dead = redis.call('XLEN', dlq)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not force and queued + scheduled + running + dead > 0 then
  return {0, queued, scheduled, running, dead, now}
end
for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end
return {1, queued, scheduled, running, dead, now}
