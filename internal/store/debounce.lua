-- debounce.lua: one debounced submission — it joins the pending task of its
-- debounce identity (its queue, type and key), or creates that task.
--
-- KEYS[1]        debounce hash (identity -> "<task id> <first ms> <due ms>")
-- KEYS[2]        the pending task's hash as the caller read it (the new
--                task's own hash when there was none)
-- KEYS[3]        schedule zset
-- KEYS[4]        wakeup stream
-- KEYS[5]        info hash (fields b0..b9, for the depth bound)
-- KEYS[6..15]    band streams of priority 0..9 (for the depth bound)
-- KEYS[16]       gwait zset (for the depth bound)
-- KEYS[17]       the new task's hash
-- KEYS[18]       oline hash (tasks waiting for their order keys: for the
--                depth bound, as enqueue.lua counts them)
--
-- ARGV[1]        the debounce identity (hex)
-- ARGV[2]        the pending task the caller expects ("" for none: the
--                first call; KEYS[2] then names the new task's own hash)
-- ARGV[3]        the new task's id
-- ARGV[4..8]     type, payload, priority, max attempts, timeout ms
-- ARGV[9]        group ("": none)
-- ARGV[10]       limit key ("": none)
-- ARGV[11]       the submission's W3C traceparent ("": none)
-- ARGV[12]       period ms (at least 1)
-- ARGV[13]       max wait ms ("0": none; else at least the period)
-- ARGV[14]       "1": keep the pending task's payload (keep first)
-- ARGV[15]       max depth (queued + scheduled + running; 0 = unbounded)
--
-- The identity's task is pending while it is SCHEDULED at the due time
-- this script last gave it (its schedule score), that time is still ahead
-- on the Redis clock, and it never ran (no run field): a task promoted,
-- started, cancelled or gone is not, and a submission then creates a new
-- one. A joining submission moves the due time to now + period, but never
-- past first + max wait (first: the creating submission's time), writes
-- its payload (unless keep first) and wakes the scheduler when the due
-- time moved earlier. A new task is SCHEDULED at now + period, with a hash,
-- as enqueue.lua makes a delayed one.
--
-- Returns { code, id, now, extra }:
--    3  created SCHEDULED: id the new task, extra its due time (ms)
--    2  joined: id the pending task, extra its hash (HGETALL) as it is now
--   -2  queue full: depth would exceed max depth; nothing written
--    0  the identity has another pending task than expected: id it ("" for
--       none; call again with its hash in KEYS[2])

local deb, pk, schedule, wakeup = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local field, expected = ARGV[1], ARGV[2]
local period, maxWait = tonumber(ARGV[12]), tonumber(ARGV[13])
local now, nowS = now_ms()

local cur, first, due = '', 0, 0
local v = redis.call('HGET', deb, field)
if v then
  local a, b, c = string.match(v, '^(%S+) (%d+) (%d+)$')
  if a then cur, first, due = a, tonumber(b), tonumber(c) end
end
if cur ~= expected then return { 0, cur, nowS, '' } end

if cur ~= '' and due > now then
  local st = redis.call('HMGET', pk, 'status', 'run')
  local score = redis.call('ZSCORE', schedule, cur)
  if st[1] == 'SCHEDULED' and not st[2] and score and tonumber(score) == due then
    local nd = now + period
    if maxWait > 0 and first + maxWait < nd then nd = math.max(first + maxWait, now) end
    local ndS = string.format('%d', nd)
    if ARGV[14] ~= '1' then redis.call('HSET', pk, 'payload', ARGV[5]) end
    redis.call('HSET', pk, 'due', ndS)
    redis.call('ZADD', schedule, ndS, cur)
    redis.call('HSET', deb, field, cur .. ' ' .. string.format('%d', first) .. ' ' .. ndS)
    if nd < due then redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1') end
    return { 2, cur, nowS, redis.call('HGETALL', pk) }
  end
end

local maxDepth = tonumber(ARGV[15])
if maxDepth > 0 and queue_depth(KEYS[5], 6, schedule, KEYS[16]) + redis.call('HLEN', KEYS[18]) >= maxDepth then
  return { -2, '', nowS, '' }
end
local id, tk = ARGV[3], KEYS[17]
local dueS = string.format('%d', now + period)
redis.call('HSET', tk, 'type', ARGV[4], 'payload', ARGV[5], 'prio', ARGV[6], 'status', 'SCHEDULED', 'max_att', ARGV[7],
  'timeout', ARGV[8], 'created', nowS, 'due', dueS)
if ARGV[9] ~= '' then redis.call('HSET', tk, 'group', ARGV[9]) end
if ARGV[10] ~= '' then redis.call('HSET', tk, 'lkey', ARGV[10]) end
if ARGV[11] ~= '' then redis.call('HSET', tk, 'trace', ARGV[11]) end
redis.call('ZADD', schedule, dueS, id)
redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
redis.call('HSET', deb, field, id .. ' ' .. nowS .. ' ' .. dueS)
return { 3, id, nowS, dueS }
