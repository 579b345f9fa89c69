-- read.lua: claim up to `credit` task entries for one worker, highest
-- priority band first, with their fields. It touches only the queue's
-- streams and info hash; the claimed tasks are started by start.lua, whose
-- KEYS name them.
--
-- KEYS[1]        info hash (field "paused")
-- KEYS[2..11]    band streams of priority 0..9
-- KEYS[12]       run hash (running tasks' state, by ULID)
--
-- ARGV[1]        consumer group
-- ARGV[2]        consumer (the worker)
-- ARGV[3]        credit (> 0)
-- ARGV[4]        reclaim min idle, ms (0 = no reclaim pass)
-- ARGV[5..14]    reclaim cursor of band 0..9
-- ARGV[15]       "1" to make sure every band has its stream and group first
--                (a worker's first read: its blocking reads span all bands)
--
-- While credit remains: first a reclaim pass over band 9 down to 0
-- (XAUTOCLAIM from each band's cursor: entries of crashed workers), then new
-- entries (XREADGROUP >) of band 9 down to 0. The reclaim pass looks at
-- every band before new entries take the credit: a reclaimed task was
-- started once already, and a backlog of new higher-priority entries must
-- not keep it from being taken over. A missing group or stream (nogroup) is
-- recreated at id 0 (create_group): entries of running or finished tasks
-- delivered again are skipped by start.lua.
--
-- A task born as its entry taken over with no Run field lost its implicit
-- first run (first_runs; or a claim not started yet): the reclaim notes
-- that run from the entry's pending state just before, as a Run field
-- "L|1|1|0|<claimed at>|0|<its consumer>" that fences nothing (the lost
-- run's late outcome is refused) and from which start.lua records the
-- crash with the worker lost and when its run began.
--
-- Returns { paused, entries, cursors }:
--   paused   1 when the queue is paused (nothing claimed), else 0
--   entries  4 values per entry: band, entry id, reclaimed (0/1), its
--            fields (flat)
--   cursors  the 10 reclaim cursors, band 0..9

local info = KEYS[1]
local group, consumer = ARGV[1], ARGV[2]
local credit = tonumber(ARGV[3])
local minIdle = tonumber(ARGV[4])

local cursors = {}
for p = 0, 9 do cursors[p + 1] = ARGV[5 + p] end
if redis.call('HGET', info, 'paused') == '1' then
  return { 1, {}, cursors }
end

if ARGV[15] == '1' then
  for p = 0, 9 do create_group(info, KEYS[2 + p], group, p) end
end

-- record_lost_firsts notes the lost implicit first runs
-- among eids (born entries of band p just taken over), from pend (their
-- XPENDING before: id, consumer, idle ms, deliveries).
local function record_lost_firsts(runs, p, eids, pend)
  local was = {}
  for _, x in ipairs(pend) do was[x[1]] = x end
  local ulids, olds, cache = {}, {}, {}
  for _, eid in ipairs(eids) do
    local x = was[eid]
    local u = born_ulid(p, eid, cache)
    if x and x[4] == 1 and u then
      ulids[#ulids + 1], olds[#olds + 1] = u, x
    end
  end
  if #ulids == 0 then return end
  local states = redis.call('HMGET', runs, unpack(ulids))
  local now = now_ms()
  local made = {}
  for i, u in ipairs(ulids) do
    if not states[i] then
      made[#made + 1] = u
      made[#made + 1] = 'L|' .. run_value(implicit_state(string.format('%d', now - olds[i][3]), olds[i][2]))
    end
  end
  if #made > 0 then redis.call('HSET', runs, '~', run_pad(), unpack(made)) end
end

local entries = {}
local function take(p, e, reclaimed)
  local n = #entries
  entries[n + 1], entries[n + 2], entries[n + 3], entries[n + 4] = p, e[1], reclaimed, e[2]
  credit = credit - 1
end

if minIdle > 0 then
  for p = 9, 0, -1 do
    if credit <= 0 then break end
    local band = KEYS[2 + p]
    local before = redis.pcall('XPENDING', band, group, 'IDLE', minIdle, cursors[p + 1], '+', credit)
    local r = redis.pcall('XAUTOCLAIM', band, group, consumer, minIdle, cursors[p + 1], 'COUNT', credit)
    if nogroup(r) then
      create_group(info, band, group, p)
      cursors[p + 1] = '0-0'
    elseif type(r) == 'table' and r.err then
      return redis.error_reply(r.err)
    else
      cursors[p + 1] = r[1]
      local lost = {}
      for _, e in ipairs(r[2]) do
        if e then
          take(p, e, 1)
          if e[2][1] == 't' then lost[#lost + 1] = e[1] end
        end
      end
      if #lost > 0 and type(before) == 'table' and not before.err then
        record_lost_firsts(KEYS[12], p, lost, before)
      end
    end
  end
end

for p = 9, 0, -1 do
  if credit <= 0 then break end
  local band = KEYS[2 + p]
  local r = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', band, '>')
  if nogroup(r) then
    create_group(info, band, group, p)
    r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', credit, 'STREAMS', band, '>')
  elseif type(r) == 'table' and r.err then
    return redis.error_reply(r.err)
  end
  if r then
    for _, e in ipairs(r[1][2]) do take(p, e, 0) end
  end
end
return { 0, entries, cursors }
