-- fire.lua: fire due ticks of one schedule — each tick creates one task,
-- at most once, however many schedulers race (a tick at or before the
-- schedule's last fired tick creates nothing).
--
-- KEYS[1]        periodic hash (definitions by name)
-- KEYS[2]        periodic:due zset (active schedules by next tick, ms)
-- KEYS[3]        periodic:fired hash (last fired tick by name)
-- KEYS[4..13]    band streams of priority 0..9
-- KEYS[14..]     the task hash of each tick's task, in order
--
-- ARGV[1]        schedule name
-- ARGV[2]        its definition as the caller read it: nothing fires if it
--                changed meanwhile (the caller reads it again)
-- ARGV[3]        next tick after these, Unix ms
-- ARGV[4]        events channel
-- ARGV[5..9]     the task: type, payload, priority, max attempts, timeout ms
-- ARGV[10]       N; then per tick: tick ms, task id, W3C traceparent ("" = none)
--
-- A fired task gets a hash (its fields, status QUEUED, "sched" = the
-- schedule, "tick" = the tick, "trace" when traced) and an entry in its band. The last fired
-- tick and the task id are kept in periodic:fired.
--
-- Returns { fired, changed }: the ids of the tasks created, and 1 when the
-- definition changed (nothing fired), else 0.

local periodic, due, fired = KEYS[1], KEYS[2], KEYS[3]
local name = ARGV[1]
if redis.call('HGET', periodic, name) ~= ARGV[2] then return { {}, 1 } end
local typ, payload, prio, maxAtt, timeout = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local band = KEYS[4 + tonumber(prio)]
local n = tonumber(ARGV[10])

local last = redis.call('HGET', fired, name)
local lastTick = last and tonumber(string.match(last, '^(%d+)')) or 0
local now, nowS = now_ms()
local out, events = {}, {}
for i = 0, n - 1 do
  local tick, id, trace = ARGV[11 + 3 * i], ARGV[12 + 3 * i], ARGV[13 + 3 * i]
  if tonumber(tick) > lastTick then
    local tk = KEYS[14 + i]
    redis.call('HSET', tk, 'type', typ, 'payload', payload, 'prio', prio, 'status', 'QUEUED', 'max_att', maxAtt,
      'timeout', timeout, 'created', nowS, 'sched', name, 'tick', tick)
    if trace ~= '' then redis.call('HSET', tk, 'trace', trace) end
    readd(band, tk, id)
    redis.call('HSET', fired, name, tick .. '|' .. id)
    lastTick = tonumber(tick)
    out[#out + 1] = id
    events[#events + 1] = id .. '\tQUEUED\t' .. typ .. '\t0\t' .. prio .. '\t' .. nowS
  end
end
redis.call('ZADD', due, ARGV[3], name)
if #events > 0 then redis.call('PUBLISH', ARGV[4], table.concat(events, '\n')) end
return { out, 0 }
