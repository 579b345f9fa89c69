-- promote.lua: move due SCHEDULED tasks to their band streams.
--
-- KEYS[1]        info hash
-- KEYS[2]        schedule zset
-- KEYS[3..12]    band streams of priority 0..9
-- KEYS[13..]     the task hash of each candidate, in order
--
-- ARGV[1]        events channel
-- ARGV[2]        N; then the N candidate task ids (the earliest of the schedule)
--
-- A candidate is promoted if its due time (its score) has passed on the
-- Redis clock and it is still SCHEDULED: an entry in its band, status QUEUED.
-- A candidate no longer SCHEDULED (cancelled meanwhile) leaves the schedule.
--
-- Returns { promoted, ms until the earliest remaining due time (-1 = none) }.

local info, schedule = KEYS[1], KEYS[2]
local channel = ARGV[1]
local n = tonumber(ARGV[2])

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

local promoted, events, queued = 0, {}, {}
for i = 0, n - 1 do
  local id, tk = ARGV[3 + i], KEYS[13 + i]
  local due = redis.call('ZSCORE', schedule, id)
  if due and tonumber(due) <= now then
    local f = redis.call('HMGET', tk, 'status', 'prio', 'type', 'attempt')
    if f[1] == 'SCHEDULED' then
      readd(KEYS[3 + tonumber(f[2])], tk, id)
      redis.call('HSET', tk, 'status', 'QUEUED')
      promoted = promoted + 1
      queued[f[2]] = (queued[f[2]] or 0) + 1
      events[#events + 1] = id .. '\tQUEUED\t' .. f[3] .. '\t' .. (f[4] or '0') .. '\t' .. f[2] .. '\t' .. string.format('%d', now)
    end
    redis.call('ZREM', schedule, id)
  end
end
if promoted > 0 then
  for p, c in pairs(queued) do redis.call('HINCRBY', info, 'q' .. p, c) end
  redis.call('PUBLISH', channel, table.concat(events, '\n'))
end
local next = redis.call('ZRANGE', schedule, 0, 0, 'WITHSCORES')
if #next == 0 then return { promoted, -1 } end
return { promoted, math.max(0, tonumber(next[2]) - now) }
