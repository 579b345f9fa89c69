-- dlq.lua: requeue or discard DEAD tasks, in one batch.
--
-- KEYS[1]        info hash
-- KEYS[2]        dead-letter stream
-- KEYS[3..12]    band streams of priority 0..9
-- KEYS[13..]     the task hash of each item, in order
--
-- ARGV[1]        "requeue" or "discard"
-- ARGV[2]        events channel
-- ARGV[3]        retention of finished tasks, ms
-- ARGV[4]        N; then the N task ids
--
-- requeue: DEAD -> QUEUED with attempt and crash counts reset and its history
--          kept; its dead-letter entry is removed.
-- discard: its dead-letter entry is removed; the task stays DEAD and expires
--          after the retention.
-- Items that are not DEAD are left alone.
--
-- Returns one code per item: 1 done, 0 not DEAD (or gone).

local info, dlq = KEYS[1], KEYS[2]
local action, channel, retention = ARGV[1], ARGV[2], ARGV[3]
local n = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- readd appends task id's entry to band from its hash (type, payload, max
-- attempts, timeout, created, idempotency hash), as enqueue writes it.
local function readd(band, tk, id)
  local s = redis.call('HMGET', tk, 'type', 'payload', 'max_att', 'timeout', 'created', 'idem')
  if s[6] then
    redis.call('XADD', band, '*', 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5], 'k', s[6])
  else
    redis.call('XADD', band, '*', 'i', id, 't', s[1], 'p', s[2], 'm', s[3], 'o', s[4], 'c', s[5])
  end
end

local out, events, moved, queued = {}, {}, 0, {}
for i = 0, n - 1 do
  local id, tk = ARGV[5 + i], KEYS[13 + i]
  local f = redis.call('HMGET', tk, 'status', 'dead_id', 'prio', 'type')
  local res = 0
  if f[1] == 'DEAD' then
    if f[2] then redis.call('XDEL', dlq, f[2]) end
    if action == 'requeue' then
      redis.call('HSET', tk, 'status', 'QUEUED', 'attempt', '0', 'crashes', '0', 'cancel', '0', 'requeued', string.format('%d', now))
      redis.call('HDEL', tk, 'dead_id', 'finished')
      redis.call('PERSIST', tk)
      readd(KEYS[3 + tonumber(f[3])], tk, id)
      events[#events + 1] = id .. '\tQUEUED\t' .. f[4] .. '\t0\t' .. f[3] .. '\t' .. string.format('%d', now)
      moved = moved + 1
      queued[f[3]] = (queued[f[3]] or 0) + 1
    else
      redis.call('HSET', tk, 'discarded', string.format('%d', now))
      redis.call('HDEL', tk, 'dead_id')
      redis.call('PEXPIRE', tk, retention)
    end
    res = 1
  end
  out[#out + 1] = res
end
if moved > 0 then
  for p, c in pairs(queued) do redis.call('HINCRBY', info, 'q' .. p, c) end
  redis.call('HINCRBY', info, 'depth', moved)
  redis.call('PUBLISH', channel, table.concat(events, '\n'))
end
return out
