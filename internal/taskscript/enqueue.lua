-- enqueue.lua: create a batch of tasks in one queue.
--
-- KEYS[1]        info hash (depth; q0..q9 queued per band; counters; paused)
-- KEYS[2]        schedule zset (task id -> due ms)
-- KEYS[3]        wakeup stream (the scheduler re-reads the earliest due time)
-- KEYS[4]        index zset (task id -> created ms)
-- KEYS[5..14]    band streams of priority 0..9
-- KEYS[15..]     task hashes and idempotency records, referenced by index below
--
-- ARGV[1]        max depth (queued + scheduled + running; 0 = unbounded)
-- ARGV[2]        idempotency window, ms (a record lives this long after creation,
--                and is extended to this long after the task finishes)
-- ARGV[3]        N; then 12 values per task:
--                id, task key index, idempotency key index (0 = none), request
--                fingerprint, type, payload, priority (0-9), max attempts,
--                timeout ms, run at (Unix ms, 0 = none), delay ms (0 = none),
--                created (Unix ms, the submitting client's clock, as in the id)
--
-- A task is SCHEDULED (in the schedule zset) when its due time — run at, or
-- now + delay, on the Redis clock — is in the future, else QUEUED (an entry
-- in its band stream: "i" id, "t" type, "p" payload, "m" max attempts, "o"
-- timeout ms, "c" created ms, "k" idempotency record hash if any — what a
-- worker needs to start it). Tasks of a batch are handled in order. (The
-- caller publishes the lifecycle events.) Counters a task does not have yet
-- (attempt, run, crashes) are absent and read as 0.
--
-- Returns 2 values per task — code, task id — then the Redis time (Unix ms)
-- used for due times. Codes:
--    1  created (the id given)
--    2  idempotent replay: the key's record has the same fingerprint; the id
--       is the original task's
--   -1  conflict: the key's record has another fingerprint; the id is the
--       original task's
--   -2  queue full: depth would exceed max depth; nothing written
--
-- Values handed to redis.call are strings: converting Lua numbers costs.

local info, schedule, wakeup, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local maxDepth = tonumber(ARGV[1])
local window = ARGV[2]
local n = tonumber(ARGV[3])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowS = string.format('%d', now)

local depth = tonumber(redis.call('HGET', info, 'depth') or '0')
local added, scheduled, queued = 0, 0, {}
local out = {}
for i = 0, n - 1 do
  local a = 4 + i * 12
  local id, tk, ik, fp = ARGV[a], KEYS[tonumber(ARGV[a + 1])], tonumber(ARGV[a + 2]), ARGV[a + 3]
  local prio, runAt, delay, created = ARGV[a + 6], ARGV[a + 9], ARGV[a + 10], ARGV[a + 11]
  local code, ret = nil, id
  if ik > 0 then
    local v = redis.call('GET', KEYS[ik])
    if v then
      local oid, ofp = string.match(v, '^(%S+) (%S+)$')
      ret = oid
      if ofp == fp then code = 2 else code = -1 end
    end
  end
  if not code and maxDepth > 0 and depth + added >= maxDepth then
    code, ret = -2, ''
  end
  if not code then
    local due = 0
    if runAt ~= '0' then due = tonumber(runAt) end
    if delay ~= '0' then due = now + tonumber(delay) end
    if due > now then
      local dueS = string.format('%d', due)
      redis.call('HSET', tk, 'type', ARGV[a + 4], 'payload', ARGV[a + 5], 'prio', prio, 'status', 'SCHEDULED',
        'max_att', ARGV[a + 7], 'timeout', ARGV[a + 8], 'created', created, 'due', dueS)
      redis.call('ZADD', schedule, dueS, id)
      scheduled = scheduled + 1
    else
      redis.call('HSET', tk, 'type', ARGV[a + 4], 'payload', ARGV[a + 5], 'prio', prio, 'status', 'QUEUED',
        'max_att', ARGV[a + 7], 'timeout', ARGV[a + 8], 'created', created)
      if ik > 0 then
        redis.call('XADD', KEYS[5 + tonumber(prio)], '*', 'i', id, 't', ARGV[a + 4], 'p', ARGV[a + 5],
          'm', ARGV[a + 7], 'o', ARGV[a + 8], 'c', created, 'k', string.sub(KEYS[ik], -64))
      else
        redis.call('XADD', KEYS[5 + tonumber(prio)], '*', 'i', id, 't', ARGV[a + 4], 'p', ARGV[a + 5],
          'm', ARGV[a + 7], 'o', ARGV[a + 8], 'c', created)
      end
      queued[prio] = (queued[prio] or 0) + 1
    end
    redis.call('ZADD', index, created, id)
    if ik > 0 then
      redis.call('SET', KEYS[ik], id .. ' ' .. fp, 'PX', window)
      redis.call('HSET', tk, 'idem', string.sub(KEYS[ik], -64))
    end
    added = added + 1
    code = 1
  end
  out[#out + 1] = code
  out[#out + 1] = ret
end

if added > 0 then
  redis.call('HINCRBY', info, 'depth', added)
  redis.call('HINCRBY', info, 'submitted', added)
  for p, c in pairs(queued) do redis.call('HINCRBY', info, 'q' .. p, c) end
  if scheduled > 0 then
    redis.call('XADD', wakeup, 'MAXLEN', '1', '*', 'w', '1')
  end
end
out[#out + 1] = now
return out
