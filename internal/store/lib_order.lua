-- lib_order.lua: ordered keys (EnqueueOpts.OrderKey): of the tasks of one
-- key, one at a time is in flight — queued, scheduled or running — and the
-- others wait in submission order; part of the store's library (lib.go).

-- order_enter enters new task ulid (hash tk, its fields written) of order
-- key okey, due at due (Unix ms, 0 = now): true when the key was free (or
-- its own) — the task holds it now and goes on as it would without a key —
-- else it waits in owait, QUEUED, its hash keeping its member (field
-- "owait"), and false.
local function order_enter(ohold, owait, tk, ulid, okey, due)
  redis.call('HSET', tk, 'okey', okey)
  local h = redis.call('HGET', ohold, okey)
  if not h or h == ulid then
    redis.call('HSET', ohold, okey, ulid)
    return true
  end
  local seq = redis.call('HINCRBY', ohold, '#', 1)
  local m = okey .. '|' .. string.format('%016d', seq) .. '|' .. string.format('%d', due) .. '|' .. ulid
  redis.call('ZADD', owait, 0, m)
  redis.call('HSET', tk, 'owait', m, 'status', 'QUEUED')
  return false
end

-- order_passed lists the ids order_release scheduled due now, for a
-- caller that moves them into their bands at once (Queue.Finish).
local order_passed = {}

-- order_release passes order key okey on from task ulid once that task has
-- ended (nothing when it does not hold the key, or okey is nil): to the
-- key's first waiter, which leaves owait and enters the schedule zset (as
-- "<queue>-<ULID>") due at its own due time or now, so that the scheduler
-- moves it into its band (promote.lua); with no waiter the key is free.
-- Returns true when it scheduled a waiter (the caller wakes the scheduler,
-- or moves those of order_passed in), and true again when that waiter is
-- due later (its own delay: the scheduler must be woken).
local function order_release(ohold, owait, schedule, queue, okey, ulid, now)
  if not okey or redis.call('HGET', ohold, okey) ~= ulid then return false end
  local nxt = waiters(owait, okey, '|', 1)
  if #nxt == 0 then
    redis.call('HDEL', ohold, okey)
    return false
  end
  local m = nxt[1]
  local nu = string.sub(m, -26)
  redis.call('ZREM', owait, m)
  redis.call('HSET', ohold, okey, nu)
  local due = tonumber(string.match(m, '|(%d+)|[^|]*$') or '0') or 0
  local id = queue .. '-' .. nu
  redis.call('ZADD', schedule, string.format('%d', math.max(now, due)), id)
  if due <= now then order_passed[#order_passed + 1] = id end
  return true, due > now
end

-- order_leave takes task ulid (hash tk) out of its order key as it ends
-- without running to its end (cancelled, deleted): a waiter leaves owait;
-- the holder passes the key on (order_release). Returns true when a waiter
-- was scheduled.
local function order_leave(ohold, owait, schedule, queue, tk, ulid, now)
  local f = redis.call('HMGET', tk, 'okey', 'owait')
  if not f[1] then return false end
  if f[2] and redis.call('ZREM', owait, f[2]) == 1 then
    redis.call('HDEL', tk, 'owait')
    return false
  end
  return order_release(ohold, owait, schedule, queue, f[1], ulid, now)
end
